#pragma once
// MatXtract's SpMV as an operator graph: CRUX_SPLIT(tau_c, tau_r) with the hot part on fp64 tensor
// cores (TC_COMPRESS > TC_MMA_F64) and the cold part on any CUDA-core sub-graph.
#include <vector>

#include "graph/graph.hpp"

namespace sparsetune::graph {

// CSR-vector: one warp per row, lanes strided (the coalesced cold kernel MatXtract uses).
std::vector<OpNode> csr_vector_ops();

// CRUX_SPLIT(tau_c, tau_r) [ TC_COMPRESS(encoding, width) > TC_MMA_F64 | cold ]; encoding 0 lets
// the storage criterion choose, 1 is the dense unfolding, 2 the sparse encoding. Width 8 puts the
// hot part on fp16 tensor cores (TC_MMA_F16, f16 formats only). `own_rows`: the hot part holds
// its rows whole (CRUX_SPLIT's own_rows = 1), and runs the cold part's threads a block (its
// SET_RESOURCES, else the default), so the two parts run in one launch. Not validated.
Graph crux_graph(double tau_c, double tau_r, std::vector<OpNode> cold = csr_vector_ops(),
                 int encoding = 0, int width = 4, bool own_rows = false);

// A crux with tau_r = 0 has no hot part: its format is its cold branch's on the whole matrix. That
// branch as a graph of its own (same name and op); any other graph unchanged.
Graph without_empty_crux(const Graph& g);

}  // namespace sparsetune::graph
