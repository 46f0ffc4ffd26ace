#pragma once
// Matrices with a planted structure: bands and dense diagonal blocks.
#include <cstdint>
#include <vector>

#include "core/matrix.hpp"

namespace sparsetune::gen {

// n x n band: row i spans columns [i - lower, i + upper] clipped to the matrix. The diagonal is
// always present; each off-diagonal band position is present with probability `fill` (1 = the
// dense band, nnz = n (lower + upper + 1) - lower (lower + 1) / 2 - upper (upper + 1) / 2 when
// both are below n). Off-diagonal values uniform in (0, 1]; the diagonal holds one more than the
// row's off-diagonal count, so the matrix is strictly diagonally dominant.
struct BandedParams {
  std::int64_t n = 10000;
  std::int64_t lower = 4;
  std::int64_t upper = 4;
  double fill = 1.0;
};
Csr64 banded(const BandedParams& p, std::uint64_t seed);

// Exact entry count of the dense band (fill = 1).
std::int64_t banded_dense_nnz(std::int64_t n, std::int64_t lower, std::int64_t upper);

// Dense square blocks on the diagonal plus optional random entries outside them.
// Block k has size block_sizes[k % block_sizes.size()]. With `blocks` > 0 there are that many
// blocks; otherwise blocks are laid out until `n` rows are covered, the last one cut to fit.
// Every off-block position is present with probability `noise` (skip sampled, O(n + nnz)).
// nnz = sum of squared block sizes when noise = 0. Values uniform in (0, 1].
// `shuffle_columns`: the columns permuted at random afterwards (rows stay sorted). Each block's
// rows still share one set of columns (dense per chunk of rows), but no index formula or
// diagonal structure describes them, so a format pays for every column index.
struct BlockDiagParams {
  std::vector<std::int64_t> block_sizes = {16};
  std::int64_t blocks = 0;
  std::int64_t n = 0;
  double noise = 0.0;
  bool shuffle_columns = false;
};
Csr64 block_diagonal(const BlockDiagParams& p, std::uint64_t seed);

// The block sizes block_diagonal lays out for these parameters (validating them).
std::vector<std::int64_t> block_layout(const BlockDiagParams& p);

}  // namespace sparsetune::gen
