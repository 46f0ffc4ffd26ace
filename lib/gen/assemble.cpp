#include "gen/assemble.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "core/convert.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"

namespace sparsetune::gen {

RowWriter::RowWriter(std::int64_t rows, std::int64_t cols, std::int64_t expected_nnz) {
  m_.rows = rows;
  m_.cols = cols;
  m_.row_ptr.reserve(rows + 1);
  m_.row_ptr.push_back(0);
  m_.col_idx.reserve(expected_nnz);
  m_.val.reserve(expected_nnz);
}

Csr64 RowWriter::finish() {
  if (static_cast<std::int64_t>(m_.row_ptr.size()) != m_.rows + 1)
    throw Error("generator wrote " + std::to_string(m_.row_ptr.size() - 1) + " rows of " +
                std::to_string(m_.rows));
  return std::move(m_);
}

Csr64 assemble_keep_first(std::int64_t rows, std::int64_t cols,
                          const std::vector<std::int64_t>& row,
                          const std::vector<std::int64_t>& col, const std::vector<double>& val,
                          std::int64_t* dropped) {
  const auto m = static_cast<std::int64_t>(row.size());
  Csr64 a;
  a.rows = rows;
  a.cols = cols;
  a.row_ptr.assign(rows + 1, 0);
  for (auto r : row) ++a.row_ptr[r + 1];
  for (std::int64_t r = 0; r < rows; ++r) a.row_ptr[r + 1] += a.row_ptr[r];
  // A counting sort by row keeps list order within each row (one scattered write per entry);
  // a stable sort by column inside each row then leaves the first drawing of a coordinate in
  // front of its repeats, working on contiguous memory.
  std::vector<std::pair<std::int64_t, double>> entries(m);
  {
    std::vector<std::int64_t> next(a.row_ptr.begin(), a.row_ptr.end() - 1);
    for (std::int64_t k = 0; k < m; ++k) entries[next[row[k]]++] = {col[k], val[k]};
  }
  a.col_idx.resize(m);
  a.val.resize(m);
  std::int64_t out = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto b = entries.begin() + a.row_ptr[r], e = entries.begin() + a.row_ptr[r + 1];
    if (e - b <= 32) {
      // Insertion sort: stable, and no buffer allocation for the many short rows.
      for (auto i = b + 1; i < e; ++i)
        for (auto j = i; j > b && (j - 1)->first > j->first; --j) std::iter_swap(j - 1, j);
    } else {
      std::stable_sort(b, e, [](const auto& x, const auto& y) { return x.first < y.first; });
    }
    a.row_ptr[r] = out;
    for (auto it = b; it != e; ++it) {
      if (out > a.row_ptr[r] && a.col_idx[out - 1] == it->first) continue;
      a.col_idx[out] = it->first;
      a.val[out] = it->second;
      ++out;
    }
  }
  a.row_ptr[rows] = out;
  a.col_idx.resize(out);
  a.val.resize(out);
  if (dropped) *dropped = m - out;
  return a;
}

Csr64 mirror_upper(const Csr64& upper) {
  const Csr64 lower = transpose(upper);
  RowWriter w(upper.rows, upper.cols, 2 * upper.nnz());
  for (std::int64_t r = 0; r < upper.rows; ++r) {
    // Row r of U^T holds columns <= r and row r of U columns >= r: concatenating keeps the order.
    for (auto k = lower.row_ptr[r]; k < lower.row_ptr[r + 1]; ++k)
      if (lower.col_idx[k] < r) w.add(lower.col_idx[k], lower.val[k]);
    for (auto k = upper.row_ptr[r]; k < upper.row_ptr[r + 1]; ++k)
      w.add(upper.col_idx[k], upper.val[k]);
    w.end_row();
  }
  return w.finish();
}

namespace {
std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}
}  // namespace

void check_entry_budget(double expected_nnz, const char* kind, double rows,
                        double bytes_per_entry) {
  constexpr double kLimit = 8589934592.0;  // 2^33 entries
  if (!(expected_nnz <= kLimit))
    throw Error(std::string(kind) + ": about " + short_number(expected_nnz) +
                " entries expected, more than the limit of 2^33");
  check_memory_need(expected_nnz * bytes_per_entry + rows * 16.0, kind);
}

}  // namespace sparsetune::gen
