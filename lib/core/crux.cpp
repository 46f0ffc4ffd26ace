#include "core/crux.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <string>

#include "core/error.hpp"

namespace sparsetune::crux {

namespace {

// ⌈τ·nnz⌉, with τ·nnz that is an integer up to rounding taken as that integer.
std::int64_t cover(double tau, std::int64_t nnz) {
  return static_cast<std::int64_t>(std::ceil(tau * static_cast<double>(nnz) - 1e-9));
}

// Indices 0..n-1 by decreasing length, ties by index.
std::vector<std::int64_t> longest_first(const std::vector<std::int64_t>& len) {
  std::vector<std::int64_t> order(len.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return len[a] > len[b]; });
  return order;
}

// The fewest of `order` whose lengths add up to at least `need` entries.
std::vector<std::int64_t> cover_prefix(const std::vector<std::int64_t>& order,
                                       const std::vector<std::int64_t>& len, std::int64_t need) {
  std::vector<std::int64_t> out;
  std::int64_t sum = 0;
  for (std::int64_t i : order) {
    if (sum >= need) break;
    out.push_back(i);
    sum += len[i];
  }
  return out;
}

std::int64_t chunks_of(std::int64_t rows, int h) { return (rows + h - 1) / h; }

void check_shape(TcShape t) {
  if (t.h < 1 || t.w < 1 || t.h * t.w > 64)
    throw Error("TC block " + std::to_string(t.h) + " x " + std::to_string(t.w) +
                ": height and width must be positive, and height x width at most 64 (one "
                "bitmap word)");
}

}  // namespace

CruxSplit crux_split(const Csr64& a, double tau_c, double tau_r) {
  if (!(tau_r >= 0 && tau_r <= tau_c && tau_c <= 1))
    throw Error("crux (tau_c = " + std::to_string(tau_c) + ", tau_r = " + std::to_string(tau_r) +
                "): needs 0 <= tau_r <= tau_c <= 1");
  CruxSplit s;
  s.tau_c = tau_c;
  s.tau_r = tau_r;
  const std::int64_t nnz = a.nnz();
  std::vector<std::int64_t> col_len(a.cols, 0);
  for (auto c : a.col_idx) ++col_len[c];
  s.hot_cols = cover_prefix(longest_first(col_len), col_len, cover(tau_c, nnz));
  std::vector<char> hot_col(a.cols, 0);
  for (auto c : s.hot_cols) hot_col[c] = 1, s.column_cover += col_len[c];

  std::vector<std::int64_t> local(a.rows, 0);
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (auto k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) local[r] += hot_col[a.col_idx[k]];
  s.hot_rows = cover_prefix(longest_first(local), local, cover(tau_r, nnz));
  std::vector<char> hot_row(a.rows, 0);
  for (auto r : s.hot_rows) hot_row[r] = 1;

  s.hot.rows = static_cast<std::int64_t>(s.hot_rows.size());
  s.hot.cols = a.cols;
  s.hot.row_ptr.assign(1, 0);
  for (auto r : s.hot_rows) {
    for (auto k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k)
      if (hot_col[a.col_idx[k]])
        s.hot.col_idx.push_back(a.col_idx[k]), s.hot.val.push_back(a.val[k]);
    s.hot.row_ptr.push_back(static_cast<std::int64_t>(s.hot.val.size()));
  }
  s.cold.rows = a.rows;
  s.cold.cols = a.cols;
  s.cold.row_ptr.assign(1, 0);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    for (auto k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k)
      if (!(hot_row[r] && hot_col[a.col_idx[k]]))
        s.cold.col_idx.push_back(a.col_idx[k]), s.cold.val.push_back(a.val[k]);
    s.cold.row_ptr.push_back(static_cast<std::int64_t>(s.cold.val.size()));
  }
  return s;
}

Compressed tcu_compress(const CruxSplit& s, TcShape shape) {
  check_shape(shape);
  Compressed c;
  c.shape = shape;
  c.rows = s.hot.rows;
  const std::int64_t chunks = chunks_of(c.rows, shape.h);
  c.chunk_block.assign(1, 0);
  for (std::int64_t k = 0; k < chunks; ++k) {
    std::vector<std::int64_t> cols;
    const std::int64_t end = std::min(c.rows, (k + 1) * shape.h);
    for (auto i = s.hot.row_ptr[k * shape.h]; i < s.hot.row_ptr[end]; ++i)
      cols.push_back(s.hot.col_idx[i]);
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    c.chunk_cols.push_back(static_cast<std::int64_t>(cols.size()));
    c.empty_columns += static_cast<std::int64_t>(s.hot_cols.size() - cols.size());
    while (!cols.empty() && cols.size() % shape.w != 0) cols.push_back(cols.back());
    c.block_col.insert(c.block_col.end(), cols.begin(), cols.end());
    c.chunk_block.push_back(static_cast<std::int64_t>(c.block_col.size()) / shape.w);
  }
  return c;
}

DenseUnfolding dense_unfold(const CruxSplit& s, const Compressed& c) {
  const auto [h, w] = c.shape;
  DenseUnfolding du;
  du.shape = c.shape;
  du.chunk_ptr = c.chunk_block;
  du.tc_col = c.block_col;
  const std::int64_t blocks = c.chunk_block.back();
  du.tc_bit.assign(blocks, 0);
  // Each entry's block and bit, then the values in (block, bit) order.
  struct Slot {
    std::int64_t block;
    int bit;
    double v;
  };
  std::vector<Slot> slots;
  slots.reserve(s.hot.val.size());
  for (std::int64_t k = 0; k + 1 < static_cast<std::int64_t>(c.chunk_block.size()); ++k) {
    const auto first = c.block_col.begin() + c.chunk_block[k] * w;
    const auto last = first + c.chunk_cols[k];  // the distinct columns, before the padding
    const std::int64_t end = std::min(c.rows, (k + 1) * h);
    for (std::int64_t r = k * h; r < end; ++r)
      for (auto i = s.hot.row_ptr[r]; i < s.hot.row_ptr[r + 1]; ++i) {
        const std::int64_t p = std::lower_bound(first, last, s.hot.col_idx[i]) - first;
        const std::int64_t b = c.chunk_block[k] + p / w;
        const int bit = static_cast<int>((r - k * h) * w + p % w);
        du.tc_bit[b] |= std::uint64_t{1} << bit;
        slots.push_back({b, bit, s.hot.val[i]});
      }
  }
  std::sort(slots.begin(), slots.end(), [](const Slot& x, const Slot& y) {
    return x.block != y.block ? x.block < y.block : x.bit < y.bit;
  });
  du.tc_ptr.assign(blocks + 1, 0);
  for (const auto& sl : slots) ++du.tc_ptr[sl.block + 1], du.val.push_back(sl.v);
  for (std::int64_t b = 0; b < blocks; ++b) du.tc_ptr[b + 1] += du.tc_ptr[b];
  return du;
}

SparseEncoding sparse_encode(const CruxSplit& s, TcShape shape) {
  check_shape(shape);
  const auto [h, w] = shape;
  SparseEncoding se;
  se.shape = shape;
  se.block_ptr.assign(1, 0);
  const std::int64_t rows = s.hot.rows;
  for (std::int64_t k = 0; k < chunks_of(rows, h); ++k) {
    const std::int64_t end = std::min(rows, (k + 1) * h);
    std::int64_t longest = 0;
    for (std::int64_t r = k * h; r < end; ++r) longest = std::max(longest, s.hot.row_length(r));
    const std::int64_t width = (longest + w - 1) / w * w;
    // A column every padded slot may read: the chunk's first entry's (rows come longest first).
    const std::int64_t any_col = longest > 0 ? s.hot.col_idx[s.hot.row_ptr[k * h]] : 0;
    const std::size_t base = se.val.size();
    se.val.resize(base + static_cast<std::size_t>(width * h), 0.0);
    se.col.resize(base + static_cast<std::size_t>(width * h), any_col);
    for (std::int64_t r = k * h; r < end; ++r) {
      const std::int64_t len = s.hot.row_length(r);
      for (std::int64_t j = 0; j < width; ++j) {
        const std::size_t at =
            base + static_cast<std::size_t>(((j / w) * h + (r - k * h)) * w + j % w);
        if (j < len) {
          se.val[at] = s.hot.val[s.hot.row_ptr[r] + j];
          se.col[at] = s.hot.col_idx[s.hot.row_ptr[r] + j];
        } else if (len > 0) {
          se.col[at] = s.hot.col_idx[s.hot.row_ptr[r + 1] - 1];
        }
      }
    }
    se.block_ptr.push_back(static_cast<std::int64_t>(se.val.size()));
  }
  return se;
}

StorageChoice choose_storage(const CruxSplit& s, const Compressed& c, int b_val, int b_idx) {
  const auto [h, w] = c.shape;
  const double chunks = static_cast<double>(c.chunk_cols.size());
  const double blocks = static_cast<double>(c.chunk_block.back());
  const double nnz = static_cast<double>(s.hot.nnz());
  StorageChoice out;
  out.dense_unfolding_bytes =
      chunks * b_idx + blocks * (h * w / 8.0 + w * b_idx + b_idx) + nnz * b_val;
  out.sparse_encoding_bytes = chunks * b_idx + nnz * (b_val + b_idx);
  out.dense_unfolding = out.dense_unfolding_bytes < out.sparse_encoding_bytes;
  return out;
}

namespace {

std::vector<double> cold_product(const CruxSplit& s, const std::vector<double>& x) {
  if (static_cast<std::int64_t>(x.size()) != s.cold.cols)
    throw Error("crux spmv: x has " + std::to_string(x.size()) + " entries, matrix has " +
                std::to_string(s.cold.cols) + " columns");
  std::vector<double> y(s.cold.rows, 0.0);
  for (std::int64_t r = 0; r < s.cold.rows; ++r)
    for (auto k = s.cold.row_ptr[r]; k < s.cold.row_ptr[r + 1]; ++k)
      if (s.cold.val[k] != 0.0) y[r] += s.cold.val[k] * x[s.cold.col_idx[k]];
  return y;
}

}  // namespace

std::vector<double> spmv_dense_unfolding(const CruxSplit& s, const DenseUnfolding& du,
                                         const std::vector<double>& x) {
  auto y = cold_product(s, x);
  const auto [h, w] = du.shape;
  for (std::int64_t k = 0; k + 1 < static_cast<std::int64_t>(du.chunk_ptr.size()); ++k)
    for (std::int64_t b = du.chunk_ptr[k]; b < du.chunk_ptr[k + 1]; ++b)
      for (int bit = 0; bit < h * w; ++bit) {
        const std::uint64_t word = du.tc_bit[b];
        if (!((word >> bit) & 1)) continue;
        // The entry's place among the block's values: the set bits below it (__popc on the GPU).
        const int rank = std::popcount(word & ((std::uint64_t{1} << bit) - 1));
        const double v = du.val[du.tc_ptr[b] + rank];
        if (v != 0.0) y[s.hot_rows[k * h + bit / w]] += v * x[du.tc_col[b * w + bit % w]];
      }
  return y;
}

std::vector<double> spmv_sparse_encoding(const CruxSplit& s, const SparseEncoding& se,
                                         const std::vector<double>& x) {
  auto y = cold_product(s, x);
  const auto [h, w] = se.shape;
  const std::int64_t rows = s.hot.rows;
  for (std::int64_t k = 0; k + 1 < static_cast<std::int64_t>(se.block_ptr.size()); ++k)
    for (std::int64_t at = se.block_ptr[k]; at < se.block_ptr[k + 1]; ++at) {
      const std::int64_t r = k * h + ((at - se.block_ptr[k]) / w) % h;
      if (r < rows && se.val[at] != 0.0) y[s.hot_rows[r]] += se.val[at] * x[se.col[at]];
    }
  return y;
}

}  // namespace sparsetune::crux
