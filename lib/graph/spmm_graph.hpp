#pragma once
// SpMM graphs from SpMV ones: the sparse mapping of any SpMV graph serves SpMM once each part
// says which columns of B its threads cover, so the known formats and searched graphs carry over.
#include "graph/graph.hpp"

namespace sparsetune::graph {

// `g` as op "spmm": COL_TILE(tn, vec) right after COMPRESS in every part (replacing a COL_TILE
// already there). The result is validated; throws GraphError for operators SpMM does not serve.
Graph as_spmm(Graph g, int tn, int vec);

}  // namespace sparsetune::graph
