#include "gen/structured.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "gen/assemble.hpp"
#include "gen/rng.hpp"

namespace sparsetune::gen {

namespace {
constexpr std::int64_t kMaxDim = (std::int64_t{1} << 31) - 1;
}

std::int64_t banded_dense_nnz(std::int64_t n, std::int64_t lower, std::int64_t upper) {
  std::int64_t total = 0;
  // Rows closer than the bandwidth to an edge lose the part of the band outside the matrix.
  const auto side = [n](std::int64_t b) {
    const std::int64_t full = std::min(b, n - 1);
    // sum over rows of min(b, distance to the edge) = sum_{i=0}^{n-1} min(b, i)
    return full * (full + 1) / 2 + (n - 1 - full) * full;
  };
  total = n + side(lower) + side(upper);
  return total;
}

Csr64 banded(const BandedParams& p, std::uint64_t seed) {
  if (p.n < 1 || p.n > kMaxDim)
    throw Error("banded: n must be in [1, 2^31 - 1], got " + std::to_string(p.n));
  if (p.lower < 0 || p.lower > kMaxDim)
    throw Error("banded: lower bandwidth must be non-negative, got " + std::to_string(p.lower));
  if (p.upper < 0 || p.upper > kMaxDim)
    throw Error("banded: upper bandwidth must be non-negative, got " + std::to_string(p.upper));
  if (!(p.fill >= 0.0 && p.fill <= 1.0))
    throw Error("banded: fill must be in [0, 1], got " + std::to_string(p.fill));
  const std::int64_t lower = std::min(p.lower, p.n - 1), upper = std::min(p.upper, p.n - 1);
  const double dense = static_cast<double>(banded_dense_nnz(p.n, lower, upper));
  check_entry_budget(dense * p.fill + static_cast<double>(p.n), "banded", static_cast<double>(p.n));
  Rng rng(seed);
  const GeometricSkip skip(p.fill);
  RowWriter w(p.n, p.n, static_cast<std::int64_t>(dense * p.fill) + p.n);
  std::vector<std::int64_t> cols;
  std::vector<double> vals;
  for (std::int64_t i = 0; i < p.n; ++i) {
    const std::int64_t lo = std::max<std::int64_t>(0, i - lower);
    const std::int64_t left = i - lo, right = std::min(p.n - 1, i + upper) - i;
    cols.clear();
    vals.clear();
    // Off-diagonal positions t = 0..left+right-1 map to lo..i-1, then i+1..i+right.
    for (std::int64_t t = skip.next(rng, left + right); t < left + right;
         t += 1 + skip.next(rng, left + right)) {
      cols.push_back(t < left ? lo + t : i + 1 + (t - left));
      vals.push_back(rng.uniform_pos());
    }
    const double diag = static_cast<double>(cols.size()) + 1.0;
    std::size_t k = 0;
    for (; k < cols.size() && cols[k] < i; ++k) w.add(cols[k], vals[k]);
    w.add(i, diag);
    for (; k < cols.size(); ++k) w.add(cols[k], vals[k]);
    w.end_row();
  }
  return w.finish();
}

std::vector<std::int64_t> block_layout(const BlockDiagParams& p) {
  if (p.block_sizes.empty()) throw Error("blockdiag: block_size needs at least one size");
  for (auto b : p.block_sizes)
    if (b < 1 || b > kMaxDim)
      throw Error("blockdiag: block_size entries must be in [1, 2^31 - 1], got " +
                  std::to_string(b));
  if (p.blocks > 0 && p.n > 0) throw Error("blockdiag: give blocks or n, not both");
  if (p.blocks < 0)
    throw Error("blockdiag: blocks must be positive, got " + std::to_string(p.blocks));
  if (p.n < 0 || p.n > kMaxDim)
    throw Error("blockdiag: n must be in [1, 2^31 - 1], got " + std::to_string(p.n));
  if (p.blocks == 0 && p.n == 0) throw Error("blockdiag: give blocks or n");
  if (p.blocks > kMaxDim)
    throw Error("blockdiag: blocks must be at most 2^31 - 1, got " + std::to_string(p.blocks));
  const auto L = static_cast<std::int64_t>(p.block_sizes.size());
  if (p.blocks > 0) {
    // Rows of whole cycles through the size list plus the partial last cycle, before anything
    // is allocated.
    std::int64_t cycle = 0, head = 0;
    for (std::int64_t k = 0; k < L; ++k) {
      cycle += p.block_sizes[k];
      if (k < p.blocks % L) head += p.block_sizes[k];
    }
    const double total = static_cast<double>(p.blocks / L) * static_cast<double>(cycle) + head;
    if (total > static_cast<double>(kMaxDim))
      throw Error("blockdiag: blocks * block_size exceeds 2^31 - 1 rows");
    check_entry_budget(total, "blockdiag", total);
  } else {
    check_entry_budget(static_cast<double>(p.n), "blockdiag", static_cast<double>(p.n));
  }
  std::vector<std::int64_t> sizes;
  std::int64_t rows = 0;
  if (p.blocks > 0) {
    for (std::int64_t k = 0; k < p.blocks; ++k) {
      sizes.push_back(p.block_sizes[k % L]);
      rows += sizes.back();
      if (rows > kMaxDim) throw Error("blockdiag: blocks * block_size exceeds 2^31 - 1 rows");
    }
  } else {
    for (std::int64_t k = 0; rows < p.n; ++k) {
      sizes.push_back(std::min(p.block_sizes[k % L], p.n - rows));
      rows += sizes.back();
    }
  }
  return sizes;
}

Csr64 block_diagonal(const BlockDiagParams& p, std::uint64_t seed) {
  if (!(p.noise >= 0.0 && p.noise <= 1.0))
    throw Error("blockdiag: noise must be in [0, 1], got " + std::to_string(p.noise));
  const auto sizes = block_layout(p);
  std::int64_t n = 0;
  double dense = 0.0;
  for (auto b : sizes) {
    n += b;
    dense += static_cast<double>(b) * static_cast<double>(b);
  }
  const double off = static_cast<double>(n) * static_cast<double>(n) - dense;
  check_entry_budget(dense + off * p.noise, "blockdiag", static_cast<double>(n));
  Rng rng(seed);
  const GeometricSkip skip(p.noise);
  RowWriter w(n, n, static_cast<std::int64_t>(dense + off * p.noise));
  std::int64_t start = 0;
  for (auto b : sizes) {
    const std::int64_t end = start + b;
    for (std::int64_t i = start; i < end; ++i) {
      // Off-block positions t = 0..n-b-1 map to columns 0..start-1, then end..n-1.
      const std::int64_t positions = n - b;
      std::int64_t t = skip.next(rng, positions);
      for (; t < positions && t < start; t += 1 + skip.next(rng, positions))
        w.add(t, rng.uniform_pos());
      for (std::int64_t j = start; j < end; ++j) w.add(j, rng.uniform_pos());
      for (; t < positions; t += 1 + skip.next(rng, positions))
        w.add(end + (t - start), rng.uniform_pos());
      w.end_row();
    }
    start = end;
  }
  Csr64 a = w.finish();
  if (p.shuffle_columns) {
    // Fisher-Yates on its own stream (the entries above are the same with or without it), then
    // each row's entries re-sorted by their new column.
    Rng order(seed ^ 0x9e3779b97f4a7c15ULL);
    std::vector<std::int64_t> to(static_cast<std::size_t>(n));
    std::iota(to.begin(), to.end(), 0);
    for (std::int64_t i = n - 1; i > 0; --i)
      std::swap(to[static_cast<std::size_t>(i)],
                to[static_cast<std::size_t>(order.below(static_cast<std::uint64_t>(i) + 1))]);
    std::vector<std::pair<std::int64_t, double>> row;
    for (std::int64_t r = 0; r < a.rows; ++r) {
      row.clear();
      for (auto k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k)
        row.emplace_back(to[static_cast<std::size_t>(a.col_idx[k])], a.val[k]);
      std::sort(row.begin(), row.end());
      for (std::size_t j = 0; j < row.size(); ++j) {
        a.col_idx[a.row_ptr[r] + static_cast<std::int64_t>(j)] = row[j].first;
        a.val[a.row_ptr[r] + static_cast<std::int64_t>(j)] = row[j].second;
      }
    }
  }
  return a;
}

}  // namespace sparsetune::gen
