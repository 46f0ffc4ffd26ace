#include "graph/spmm_graph.hpp"

namespace sparsetune::graph {

namespace {

void add_col_tile(std::vector<OpNode>& ops, int tn, int vec) {
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].op == "COL_TILE") {
      ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(i));
      --i;
      continue;
    }
    for (auto& b : ops[i].branches) add_col_tile(b, tn, vec);
  }
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (ops[i].op == "COMPRESS") {
      ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                 OpNode{"COL_TILE", {{"tn", tn}, {"vec", vec}}, {}});
      return;
    }
}

}  // namespace

Graph as_spmm(Graph g, int tn, int vec) {
  g.op = "spmm";
  add_col_tile(g.ops, tn, vec);
  validate(g, g.name.empty() ? "spmm graph" : "spmm graph " + g.name);
  return g;
}

}  // namespace sparsetune::graph
