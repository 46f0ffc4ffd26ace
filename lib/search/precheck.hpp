#pragma once
// Candidates bound to fail, or bound to lose by far, on a matrix, told from the graph and a few
// numbers of the matrix before any design: designing a candidate of millions of entries takes
// seconds, so these are pruned instead of designed. Each rule names why.
#include <cstdint>
#include <string>

#include "core/matrix.hpp"
#include "graph/graph.hpp"

namespace sparsetune::search {

struct MatrixShape {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  std::int64_t max_row = 0;  // longest row
  std::int64_t empty_rows = 0;
  std::int64_t row_len_gcd = 0;  // of every row length (0: no entries)
  static MatrixShape of(const Csr64& a);
};

// A thread that owns a whole row of more entries than this is hopeless: its warp waits for it
// while the other lanes idle, and one such row costs more than the rest of a typical SpMV.
inline constexpr std::int64_t kThreadRowLimit = 4096;

// "" when the graph may be designed; else the reason it is pruned. Rules: a reduction that needs
// one row per block (THREAD/WARP/SHMEM_TOTAL_RED) under blocks that certainly hold several rows
// (a row block of rows > 1 whose parent holds several, an entry block of k > 1 entries cut from
// blocks of several rows when some row length is not a multiple of k, or an implied level that
// inherits them);
// threads owning whole rows, outside any dividing operator, when the longest row is longer than
// kThreadRowLimit.
std::string bound_to_fail(const graph::Graph& g, const MatrixShape& m);

}  // namespace sparsetune::search
