#include "models/launch_estimate.hpp"

#include <algorithm>
#include <cmath>

namespace sparsetune::models {

namespace {

constexpr double kSms = 132, kThreadsPerSm = 2048, kBlocksPerSm = 32, kDefaultThreads = 128;

struct Cut {
  int level = -1;  // 0: BMTB, 1: BMW, 2: BMT
  double units = -1;
};

double number(const nlohmann::json& p, const char* key, double fallback) {
  const auto it = p.find(key);
  return it != p.end() && it->is_number() ? it->get<double>() : fallback;
}

// The coarsest cut of the operator list (and its branches), with the units it makes.
void find_cut(const std::vector<graph::OpNode>& ops, double rows, double nnz, Cut& c,
              double& threads, double& max_blocks) {
  static const char* levels[] = {"BMTB_", "BMW_", "BMT_"};
  for (const auto& n : ops) {
    if (n.op == "SET_RESOURCES" && threads < 0) {
      threads = number(n.params, "threads", -1);
      max_blocks = number(n.params, "max_blocks", -1);
    }
    for (int l = 0; l < 3; ++l) {
      const std::string prefix = levels[l];
      if (n.op.rfind(prefix, 0) != 0 || (c.level >= 0 && c.level <= l)) continue;
      const std::string cut = n.op.substr(prefix.size());
      double units = -1;
      if (cut == "ROW_BLOCK") {
        const double max_nnz = number(n.params, "max_nnz", 0);
        units = max_nnz > 0 ? nnz / max_nnz : rows / std::max(1.0, number(n.params, "rows", 1));
        units *= std::max(1.0, number(n.params, "lanes", 1));
      } else if (cut == "NNZ_BLOCK") {
        units = nnz / std::max(1.0, number(n.params, "nnz", 4));
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
  LaunchEstimate e;
  e.threads = threads > 0 ? threads : kDefaultThreads;
  const double resident = std::min(kBlocksPerSm, std::floor(kThreadsPerSm / e.threads));
  e.occupancy_cap = resident * e.threads / kThreadsPerSm;
  if (c.level < 0) return e;
  const double per_block = c.level == 0 ? 1.0 : c.level == 1 ? e.threads / 32 : e.threads;
  e.blocks = std::ceil(c.units / std::max(per_block, 1.0));
  if (max_blocks > 0) e.blocks = std::min(e.blocks, max_blocks);  // the rest loop over the grid
  e.waves = e.blocks / (kSms * std::max(resident, 1.0));
  return e;
}

std::vector<double> launch_features(const LaunchEstimate& e) {
  return {e.blocks > 0 ? std::log2(e.blocks) : -1.0, e.threads, e.occupancy_cap, e.waves};
}

}  // namespace sparsetune::models
