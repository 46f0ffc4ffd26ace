#pragma once
// SpMM graphs from SpMV ones: the sparse mapping of any SpMV graph serves SpMM once each part
// says which columns of B its threads cover, so the known formats and searched graphs carry over.
#include "core/row_orders.hpp"
#include "graph/graph.hpp"

namespace sparsetune::graph {

// `g` as op "spmm": COL_TILE(tn, vec, lanes) right after COMPRESS in every part (replacing a
// COL_TILE already there; lanes = 1 is left implicit). The result is validated; throws
// GraphError for operators SpMM does not serve, or that lanes > 1 does not compose with.
Graph as_spmm(Graph g, int tn, int vec, int lanes = 1);

// `g` (an SpMM graph of one part) with ROW_ORDER(order) first, the order made for the warps of
// g's thread block (SET_RESOURCES threads / 32; 4 without one) as Mehrabi et al.'s N_w is.
// Replaces a ROW_ORDER already there (and its suffix of the name); validated; named
// "<g.name>-<order name>". The Hamming
// searches take their candidates by `candidates`: shared lines are the parameter candidates = 1
// and "-shared-lines" after the name; its default, 0, is the matrix's order (as graphs written
// before shared lines have it). The other orders ignore the rule and carry neither.
Graph with_row_order(Graph g, int order,
                     row_orders::Candidates candidates = row_orders::Candidates::shared_lines);

// Mehrabi et al.'s output-stationary CSR SpMM (§II-B, Alg. 1) as a graph: CTAs of `warps`
// warps, row i of a CTA's strip to warp i mod N_w, the warp's lanes striding over the row's
// entries (THREAD_TOTAL_RED > WARP_TOTAL_RED), each lane holding a C tile of `tn` columns in
// registers. Grid y is C's column tiles; grid x holds `ctas` CTAs per column tile, each of them
// walking the strips c, c + ctas, ... in turn with no barrier between them, so a CTA is busy
// until its most loaded warp ends: the imbalance the load-balancing orders remove. Meant for
// column-major B (a warp's 32 consecutive columns read one line of a column of B, the orders'
// cache-line model). Throws GraphError on warps outside 1..32, tn outside 1..32 or ctas < 1.
struct StationaryOptions {
  int warps = 32;  // N_w
  int tn = 8;      // columns of C per CTA (grid y = ceil(n / tn))
  int ctas = 0;    // CTAs per column tile; 0: no cap (one per strip)
};
Graph output_stationary(const StationaryOptions& o);

}  // namespace sparsetune::graph
