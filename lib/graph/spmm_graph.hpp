#pragma once
// SpMM graphs from SpMV ones: the sparse mapping of any SpMV graph serves SpMM once each part
// says which columns of B its threads cover, so the known formats and searched graphs carry over.
#include "graph/graph.hpp"

namespace sparsetune::graph {

// `g` as op "spmm": COL_TILE(tn, vec, lanes) right after COMPRESS in every part (replacing a
// COL_TILE already there; lanes = 1 is left implicit). The result is validated; throws
// GraphError for operators SpMM does not serve, or that lanes > 1 does not compose with.
Graph as_spmm(Graph g, int tn, int vec, int lanes = 1);

// `g` (an SpMM graph of one part) with ROW_ORDER(order) first, the order made for the warps of
// g's thread block (SET_RESOURCES threads / 32; 4 without one) as Mehrabi et al.'s N_w is.
// Replaces a ROW_ORDER already there; validated; named "<g.name>-<order name>".
Graph with_row_order(Graph g, int order);

}  // namespace sparsetune::graph
