#include "graph/spmm_graph.hpp"

#include <algorithm>
#include <string>

#include "core/row_orders.hpp"

namespace sparsetune::graph {

namespace {

void add_col_tile(std::vector<OpNode>& ops, int tn, int vec, int lanes) {
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].op == "COL_TILE") {
      ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(i));
      --i;
      continue;
    }
    for (auto& b : ops[i].branches) add_col_tile(b, tn, vec, lanes);
  }
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (ops[i].op == "COMPRESS") {
      OpNode tile{"COL_TILE", {{"tn", tn}, {"vec", vec}}, {}};
      if (lanes != 1) tile.params["lanes"] = lanes;  // the default stays implicit
      ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(i) + 1, std::move(tile));
      return;
    }
}

}  // namespace

Graph as_spmm(Graph g, int tn, int vec, int lanes) {
  g.op = "spmm";
  add_col_tile(g.ops, tn, vec, lanes);
  validate(g, g.name.empty() ? "spmm graph" : "spmm graph " + g.name);
  return g;
}

namespace {
// What with_row_order puts after a graph's name for an order (index into all_orders) and rule.
std::string order_suffix(int order, bool shared_lines) {
  std::string s = "-";
  s += row_orders::name(row_orders::all_orders()[static_cast<std::size_t>(order)]);
  if (shared_lines) s += "-shared-lines";
  return s;
}
}  // namespace

Graph with_row_order(Graph g, int order, row_orders::Candidates candidates) {
  const auto& orders = row_orders::all_orders();
  if (order < 0 || order >= static_cast<int>(orders.size()))
    throw GraphError("row order " + std::to_string(order) + " is not 0 to " +
                     std::to_string(orders.size() - 1));
  int threads = 128;
  for (auto it = g.ops.begin(); it != g.ops.end();) {
    if (it->op == "ROW_ORDER") {
      // The order replaced leaves the name with its suffix, so that orders replaced in turn
      // name the last one alone ("csr-vector-dcsr", never "csr-vector-plain-dcsr").
      const int old = it->params.value("order", -1);
      if (old >= 0 && old < static_cast<int>(orders.size())) {
        const auto suffix = order_suffix(old, it->params.value("candidates", 0) == 1);
        if (g.name.size() > suffix.size() &&
            g.name.compare(g.name.size() - suffix.size(), suffix.size(), suffix) == 0)
          g.name.resize(g.name.size() - suffix.size());
      }
      it = g.ops.erase(it);
      continue;
    }
    if (it->op == "SET_RESOURCES" && it->params.contains("threads"))
      threads = it->params["threads"].get<int>();
    ++it;
  }
  const auto which = orders[static_cast<std::size_t>(order)];
  const bool shared =
      candidates == row_orders::Candidates::shared_lines && row_orders::uses_candidates(which);
  nlohmann::json params = {{"order", order}, {"warps", std::max(1, threads / 32)}};
  if (shared) params["candidates"] = 1;
  g.ops.insert(g.ops.begin(), OpNode{"ROW_ORDER", params, {}});
  g.name += order_suffix(order, shared);
  validate(g, "spmm graph " + g.name);
  return g;
}

Graph output_stationary(const StationaryOptions& o) {
  if (o.warps < 1 || o.warps > 32)
    throw GraphError("output-stationary: warps must be 1 to 32 (got " + std::to_string(o.warps) +
                     ")");
  if (o.tn < 1 || o.tn > 32)
    throw GraphError("output-stationary: tn must be 1 to 32 (got " + std::to_string(o.tn) + ")");
  if (o.ctas < 0)
    throw GraphError("output-stationary: ctas must be 0 or more (got " + std::to_string(o.ctas) +
                     ")");
  Graph g;
  g.name = "output-stationary";
  g.op = "spmm";
  nlohmann::json res = {{"threads", 32 * o.warps}};
  if (o.ctas > 0) res["max_blocks"] = o.ctas;
  g.ops = {OpNode{"COMPRESS", nlohmann::json::object(), {}},
           OpNode{"COL_TILE", {{"tn", o.tn}, {"vec", 1}}, {}},
           OpNode{"BMW_ROW_BLOCK", {{"rows", 1}}, {}},
           OpNode{"SET_RESOURCES", res, {}},
           OpNode{"THREAD_TOTAL_RED", nlohmann::json::object(), {}},
           OpNode{"WARP_TOTAL_RED", nlohmann::json::object(), {}}};
  validate(g, "spmm graph output-stationary");
  return g;
}

}  // namespace sparsetune::graph
