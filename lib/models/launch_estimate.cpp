#include "models/launch_estimate.hpp"

#include <algorithm>
#include <cmath>

#include "graph/metadata.hpp"
#include "graph/registry.hpp"

namespace sparsetune::models {

namespace {

constexpr double kSms = 132, kThreadsPerSm = 2048, kBlocksPerSm = 32;

struct Cut {
  int level = -1;  // 0: BMTB, 1: BMW, 2: BMT
  double units = -1;
};

// The operator's parameter `key`: the graph's value, else the default its registration gives
// (-1 when neither is a number).
double number(const graph::OpNode& n, const char* key) {
  if (const auto it = n.params.find(key); it != n.params.end() && it->is_number())
    return it->get<double>();
  if (const auto* op = graph::find_operator(n.op))
    for (const auto& spec : op->params())
      if (spec.name == key && spec.fallback.is_number()) return spec.fallback.get<double>();
  return -1;
}

// The coarsest cut of the operator list (and its branches), with the units it makes.
void find_cut(const std::vector<graph::OpNode>& ops, double rows, double nnz, Cut& c,
              double& threads, double& max_blocks) {
  static const char* levels[] = {"BMTB_", "BMW_", "BMT_"};
  for (const auto& n : ops) {
    if (n.op == "SET_RESOURCES" && threads < 0) {
      threads = number(n, "threads");
      max_blocks = number(n, "max_blocks");
    }
    for (int l = 0; l < 3; ++l) {
      const std::string prefix = levels[l];
      if (n.op.rfind(prefix, 0) != 0 || (c.level >= 0 && c.level <= l)) continue;
      const std::string cut = n.op.substr(prefix.size());
      double units = -1;
      if (cut == "ROW_BLOCK") {
        const double max_nnz = number(n, "max_nnz");
        units = max_nnz > 0 ? nnz / max_nnz : rows / std::max(1.0, number(n, "rows"));
        units *= std::max(1.0, number(n, "lanes"));  // -1 where the level has no lanes
      } else if (cut == "NNZ_BLOCK") {
        units = nnz / std::max(1.0, number(n, "nnz"));
      } else if (cut == "COL_BLOCK") {
        units = rows;  // a tile per row at least
      } else {
        continue;  // padding and sorting cut nothing
      }
      c = {l, std::max(1.0, std::ceil(units))};
    }
    for (const auto& b : n.branches) find_cut(b, rows, nnz, c, threads, max_blocks);
  }
}

}  // namespace

const std::vector<std::string>& launch_feature_names() {
  static const std::vector<std::string> names = {"launch.log2_blocks", "launch.threads",
                                                 "launch.occupancy_cap", "launch.waves"};
  return names;
}

LaunchEstimate estimate_launch(const graph::Graph& g, double rows, double nnz) {
  Cut c;
  double threads = -1, max_blocks = -1;
  find_cut(g.ops, std::max(rows, 1.0), std::max(nnz, 1.0), c, threads, max_blocks);
  // Without SET_RESOURCES a part keeps the designer's defaults.
  static const graph::Part part;
  if (threads <= 0) threads = part.threads;
  if (max_blocks <= 0) max_blocks = static_cast<double>(part.max_blocks);
  LaunchEstimate e;
  e.threads = threads;
  const double resident = std::min(kBlocksPerSm, std::floor(kThreadsPerSm / e.threads));
  e.occupancy_cap = resident * e.threads / kThreadsPerSm;
  if (c.level < 0) return e;
  const double per_block = c.level == 0 ? 1.0 : c.level == 1 ? e.threads / 32 : e.threads;
  e.blocks = std::ceil(c.units / std::max(per_block, 1.0));
  e.blocks = std::min(e.blocks, max_blocks);  // the rest loop over the grid
  e.waves = e.blocks / (kSms * std::max(resident, 1.0));
  return e;
}

std::vector<double> launch_features(const LaunchEstimate& e) {
  return {e.blocks > 0 ? std::log2(e.blocks) : -1.0, e.threads, e.occupancy_cap, e.waves};
}

}  // namespace sparsetune::models
