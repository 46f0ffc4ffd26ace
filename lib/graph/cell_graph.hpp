#pragma once
// LiteForm's CELL (core/cell.hpp) as a composition of the IR's operators, for SpMM:
//   COL_DIV(count = P)                         the column partitions (their results add up)
//   └ per partition: BIN(bounds = 2, 3, 5, 9, …, W_max + 1)
//       ├ bucket i (rows of 2^(i-1) < l ≤ 2^i, width W = 2^i): an ELL of width W in blocks of
//       │   2^k = block_factor · W_max slots: COMPRESS > COL_TILE > BMTB_ROW_BLOCK(rows = 2^k / W)
//       │   > BMT_ROW_BLOCK(rows = 1) > BMT_PAD(multiple = W, to_max, interleave)
//       │   > SET_RESOURCES > THREAD_TOTAL_RED          (one thread per row, stored once)
//       └ the folded rows (l > W_max): each cut into pieces of W_max, padded, summed by atomics:
//           COMPRESS > COL_TILE > BMTB_ROW_BLOCK(rows = 1) > BMT_NNZ_BLOCK(nnz = W_max)
//           > BMT_PAD(multiple = W_max) > SET_RESOURCES > THREAD_TOTAL_RED > GMEM_ATOM_RED
// with each partition's W_max from Alg. 3 (cell::build_tuned, eq. 7's cost for n columns of B).
// Each bucket is a part of the design: its kernel is launched after the previous part's.
#include <cstdint>
#include <vector>

#include "core/matrix.hpp"
#include "graph/graph.hpp"

namespace sparsetune::graph {

struct CellGraphOptions {
  int partitions = 1;    // P, 1 ≤ P ≤ max(cols, 1)
  int block_factor = 1;  // 2^k = block_factor · W_max (a power of two)
  int tn = 4, vec = 4;   // COL_TILE of every bucket
  int lanes = 1;         // COL_TILE lanes: a group of lanes over B's columns walks each row
  int threads = 128;     // SET_RESOURCES of the ELL buckets
};

// The CELL graph of the given partition widths (W_max of each partition: powers of two).
Graph cell_graph(const std::vector<std::int64_t>& max_width, const CellGraphOptions& o);

// The same with Alg. 3's widths for `a` and n columns of B.
Graph cell_graph(const Csr64& a, std::int64_t n, const CellGraphOptions& o);

}  // namespace sparsetune::graph
