#include "core/cell.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include "core/error.hpp"

namespace sparsetune::cell {

namespace {

bool is_pow2(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

std::int64_t ceil_pow2(std::int64_t v) {
  std::int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

std::int64_t floor_pow2(std::int64_t v) {
  std::int64_t p = 1;
  while (p * 2 <= v) p <<= 1;
  return p;
}

// Row r's entries in columns [cb, ce): positions [first, last) of col_idx.
std::pair<std::int64_t, std::int64_t> local(const Csr64& a, std::int64_t r, std::int64_t cb,
                                            std::int64_t ce) {
  const auto begin = a.col_idx.begin() + a.row_ptr[r], end = a.col_idx.begin() + a.row_ptr[r + 1];
  const auto lo = std::lower_bound(begin, end, cb), hi = std::lower_bound(lo, end, ce);
  return {lo - a.col_idx.begin(), hi - a.col_idx.begin()};
}

std::int64_t part_begin(std::int64_t cols, int parts, int p) { return cols * p / parts; }

Partition make_partition(const Csr64& a, std::int64_t cb, std::int64_t ce, std::int64_t wmax,
                         int block_factor, int parts) {
  Partition part;
  part.col_begin = cb;
  part.col_end = ce;
  part.max_width = wmax;
  part.block_slots = wmax * block_factor;
  std::map<std::int64_t, Bucket> by_width;
  std::map<std::int64_t, std::vector<std::int64_t>> cols_of;  // the entries' columns, per width
  auto append = [&](std::int64_t width, std::int64_t row, std::int64_t first, std::int64_t count,
                    bool folded) {
    auto& b = by_width[width];
    b.width = width;
    b.row.push_back(row);
    for (std::int64_t j = 0; j < width; ++j) {
      const bool real = j < count;
      b.col.push_back(a.col_idx[first + (real ? j : count - 1)]);
      b.val.push_back(real ? a.val[first + j] : 0.0);
      if (real) cols_of[width].push_back(a.col_idx[first + j]);
    }
    b.entries += count;
    b.folded_rows += folded;
  };
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const auto [lo, hi] = local(a, r, cb, ce);
    const std::int64_t len = hi - lo;
    if (len == 0) continue;
    if (len <= wmax) {
      append(ceil_pow2(len), r, lo, len, false);
    } else {
      for (std::int64_t at = lo; at < hi; at += wmax)
        append(wmax, r, at, std::min(wmax, hi - at), true);
    }
  }
  for (auto& [w, b] : by_width) {
    auto& cs = cols_of[w];
    std::sort(cs.begin(), cs.end());
    b.distinct_cols = std::unique(cs.begin(), cs.end()) - cs.begin();
    // Whole blocks: 2^k / W rows each, padded with rows of index -1.
    const std::int64_t per_block = part.block_slots / w;
    while (b.rows() % per_block != 0) {
      b.row.push_back(-1);
      b.col.insert(b.col.end(), w, cb);
      b.val.insert(b.val.end(), w, 0.0);
    }
    b.atomic = parts > 1 || w == wmax;
    part.buckets.push_back(std::move(b));
  }
  return part;
}

}  // namespace

std::int64_t natural_width(const Csr64& a, std::int64_t col_begin, std::int64_t col_end) {
  std::int64_t longest = 1;
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const auto [lo, hi] = local(a, r, col_begin, col_end);
    longest = std::max(longest, hi - lo);
  }
  return ceil_pow2(longest);
}

namespace {

void check_shape(const Csr64& a, int partitions, int block_factor) {
  if (partitions < 1 || partitions > std::max<std::int64_t>(a.cols, 1))
    throw Error("CELL: partitions = " + std::to_string(partitions) + ": needs 1 to " +
                std::to_string(std::max<std::int64_t>(a.cols, 1)) + " (the matrix's columns)");
  if (!is_pow2(block_factor))
    throw Error("CELL: block_factor = " + std::to_string(block_factor) + ": needs a power of two");
}

}  // namespace

Cell build(const Csr64& a, int partitions, const std::vector<std::int64_t>& max_width,
           int block_factor) {
  check_shape(a, partitions, block_factor);
  if (!max_width.empty() && static_cast<int>(max_width.size()) != partitions)
    throw Error("CELL: " + std::to_string(max_width.size()) + " widths for " +
                std::to_string(partitions) + " partitions");
  Cell c;
  c.rows = a.rows;
  c.cols = a.cols;
  for (int p = 0; p < partitions; ++p) {
    const std::int64_t cb = part_begin(a.cols, partitions, p),
                       ce = part_begin(a.cols, partitions, p + 1);
    std::int64_t w = max_width.empty() ? 0 : max_width[p];
    if (w == 0) w = natural_width(a, cb, ce);
    if (!is_pow2(w))
      throw Error("CELL: max_width[" + std::to_string(p) + "] = " + std::to_string(w) +
                  ": needs a power of two (or 0 for the partition's own)");
    c.parts.push_back(make_partition(a, cb, ce, w, block_factor, partitions));
  }
  return c;
}

namespace {

// Eq. 7 for a bucket of `rows` rows (I1) of width w whose entries touch `distinct` columns.
double eq7(std::int64_t rows, std::int64_t width, std::int64_t distinct, std::int64_t n) {
  const double i1 = static_cast<double>(rows), w = static_cast<double>(width);
  return 2.0 * i1 * w + static_cast<double>(distinct) * static_cast<double>(n) +
         i1 * static_cast<double>(n);
}

}  // namespace

double bucket_cost(const Bucket& b, std::int64_t n) {
  std::int64_t rows = 0;  // I1: the bucket's rows of A, folded ones counted, padding not
  for (auto r : b.row) rows += r >= 0;
  return eq7(rows, b.width, b.distinct_cols, n);
}

double cost(const Partition& p, std::int64_t n) {
  double s = 0;
  for (const auto& b : p.buckets) s += bucket_cost(b, n);
  return s;
}

double cost(const Cell& c, std::int64_t n) {
  double s = 0;
  for (const auto& p : c.parts) s += cost(p, n);
  return s;
}

double partition_cost(const Csr64& a, std::int64_t col_begin, std::int64_t col_end,
                      std::int64_t max_width, std::int64_t n) {
  if (!is_pow2(max_width))
    throw Error("CELL: max_width = " + std::to_string(max_width) + ": needs a power of two");
  int top = 0;  // bucket 2^top is the widest
  while ((std::int64_t{1} << top) < max_width) ++top;
  std::vector<std::int64_t> rows(top + 1, 0), distinct(top + 1, 0);
  // Bit i of a column: it already counted among the entries of the bucket of width 2^i.
  std::vector<std::uint64_t> seen(
      static_cast<std::size_t>(std::max<std::int64_t>(col_end - col_begin, 0)), 0);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const auto [lo, hi] = local(a, r, col_begin, col_end);
    const std::int64_t len = hi - lo;
    if (len == 0) continue;
    int i = top;
    if (len <= max_width) {
      for (i = 0; (std::int64_t{1} << i) < len;) ++i;
      ++rows[i];
    } else {
      rows[i] += (len + max_width - 1) / max_width;  // folded into rows of the widest bucket
    }
    const std::uint64_t bit = std::uint64_t{1} << i;
    for (std::int64_t k = lo; k < hi; ++k) {
      auto& s = seen[a.col_idx[k] - col_begin];
      if (!(s & bit)) s |= bit, ++distinct[i];
    }
  }
  double c = 0;
  for (int i = 0; i <= top; ++i)
    if (rows[i] > 0) c += eq7(rows[i], std::int64_t{1} << i, distinct[i], n);
  return c;
}

Cell build_tuned(const Csr64& a, int partitions, std::int64_t n, int block_factor) {
  check_shape(a, partitions, block_factor);  // before searching
  std::vector<std::int64_t> widths;
  for (int p = 0; p < partitions; ++p) {
    const std::int64_t cb = part_begin(a.cols, partitions, p),
                       ce = part_begin(a.cols, partitions, p + 1);
    // The cost is counted, not built: building every tried width's arrays took seconds per
    // partition on a matrix of millions of entries.
    auto cost_at = [&](std::int64_t w) { return partition_cost(a, cb, ce, w, n); };
    std::int64_t lw = 1, rw = natural_width(a, cb, ce);
    while (lw < rw) {
      const std::int64_t mw = floor_pow2((lw + rw) / 2);
      if (cost_at(mw) > cost_at(2 * mw))
        lw = 2 * mw;  // the better width is to the right
      else
        rw = mw;
    }
    widths.push_back(lw);
  }
  return build(a, partitions, widths, block_factor);
}

std::vector<double> spmm_cell(const Cell& c, const std::vector<double>& b, std::int64_t n) {
  if (n < 1 || static_cast<std::int64_t>(b.size()) != c.cols * n)
    throw Error("CELL spmm: B must be " + std::to_string(c.cols) + " x " + std::to_string(n));
  std::vector<double> out(c.rows * n, 0.0);
  for (const auto& p : c.parts)
    for (const auto& bk : p.buckets)
      for (std::int64_t i = 0; i < bk.rows(); ++i) {
        if (bk.row[i] < 0) continue;
        double* crow = &out[bk.row[i] * n];
        for (std::int64_t j = 0; j < bk.width; ++j) {
          const double v = bk.val[i * bk.width + j];
          const double* brow = &b[bk.col[i * bk.width + j] * n];
          for (std::int64_t q = 0; q < n; ++q) crow[q] += v * brow[q];
        }
      }
  return out;
}

}  // namespace sparsetune::cell
