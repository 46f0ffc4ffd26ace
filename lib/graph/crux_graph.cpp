#include "graph/crux_graph.hpp"

namespace sparsetune::graph {

std::vector<OpNode> csr_vector_ops() {
  return {{"COMPRESS", nlohmann::json::object(), {}},
          {"BMW_ROW_BLOCK", {{"rows", 1}}, {}},
          {"THREAD_TOTAL_RED", nlohmann::json::object(), {}},
          {"WARP_TOTAL_RED", nlohmann::json::object(), {}}};
}

Graph crux_graph(double tau_c, double tau_r, std::vector<OpNode> cold, int encoding, int width,
                 bool own_rows) {
  Graph g;
  g.name = own_rows ? "crux-own-rows" : "crux";
  OpNode split{"CRUX_SPLIT", {{"tau_c", tau_c}, {"tau_r", tau_r}}, {}};
  if (own_rows) split.params["own_rows"] = 1;
  std::vector<OpNode> hot = {{"TC_COMPRESS", {{"encoding", encoding}, {"width", width}}, {}}};
  if (own_rows)  // the cold part's block size: fusion needs one thread count
    for (const auto& n : cold)
      if (n.op == "SET_RESOURCES" && n.params.contains("threads"))
        hot.push_back({"SET_RESOURCES", {{"threads", n.params["threads"]}}, {}});
  hot.push_back({width == 8 ? "TC_MMA_F16" : "TC_MMA_F64", nlohmann::json::object(), {}});
  split.branches.push_back(std::move(hot));
  split.branches.push_back(std::move(cold));
  g.ops.push_back(std::move(split));
  return g;
}

Graph without_empty_crux(const Graph& g) {
  if (g.ops.size() != 1 || g.ops[0].op != "CRUX_SPLIT" || g.ops[0].branches.size() != 2) return g;
  const auto& p = g.ops[0].params;
  if (!p.contains("tau_r") || !p["tau_r"].is_number() || p["tau_r"].get<double>() != 0.0) return g;
  Graph cold = g;
  cold.ops = g.ops[0].branches[1];
  return cold;
}

}  // namespace sparsetune::graph
