#pragma once
// Conversions between COO, CSR and CSC; duplicate summing; transposition; index narrowing.
// All run in O(nnz + rows + cols) apart from the per-row column sort.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "core/matrix.hpp"

namespace sparsetune {

namespace detail {
template <class T>
void check_fits(std::int64_t v, const char* what) {
  if (v > static_cast<std::int64_t>(std::numeric_limits<T>::max()))
    throw Error(std::string(what) + " " + std::to_string(v) + " does not fit a " +
                std::to_string(sizeof(T) * 8) + "-bit index");
}

// Sorts the column indices (and values) of each row of a CSR in place.
template <class I, class P>
void sort_rows(Csr<I, P>& a) {
  std::vector<std::pair<I, double>> buf;
  for (std::int64_t r = 0; r < a.rows; ++r) {
    auto b = static_cast<std::int64_t>(a.row_ptr[r]), e = static_cast<std::int64_t>(a.row_ptr[r + 1]);
    bool sorted = true;
    for (auto k = b + 1; k < e; ++k)
      if (a.col_idx[k - 1] > a.col_idx[k]) { sorted = false; break; }
    if (sorted) continue;
    buf.clear();
    for (auto k = b; k < e; ++k) buf.emplace_back(a.col_idx[k], a.val[k]);
    std::stable_sort(buf.begin(), buf.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (auto k = b; k < e; ++k) {
      a.col_idx[k] = buf[k - b].first;
      a.val[k] = buf[k - b].second;
    }
  }
}

// Sums entries with equal column inside each (sorted) row; returns how many were merged away.
template <class I, class P>
std::int64_t merge_duplicates(Csr<I, P>& a) {
  std::int64_t out = 0, removed = 0, begin = 0;
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const auto end = static_cast<std::int64_t>(a.row_ptr[r + 1]);
    const std::int64_t row_start = out;
    for (auto k = begin; k < end; ++k) {
      if (out > row_start && a.col_idx[k] == a.col_idx[out - 1]) {
        a.val[out - 1] += a.val[k];
        ++removed;
      } else {
        a.col_idx[out] = a.col_idx[k];
        a.val[out] = a.val[k];
        ++out;
      }
    }
    begin = end;
    a.row_ptr[r + 1] = static_cast<P>(out);
  }
  a.col_idx.resize(out);
  a.val.resize(out);
  return removed;
}
}  // namespace detail

// COO -> CSR by a counting sort on rows; columns sorted per row; duplicates summed.
// `duplicates`, when given, receives the number of entries merged into an earlier one.
template <class I, class P, class J>
Csr<I, P> coo_to_csr(const Coo<J>& a, std::int64_t* duplicates = nullptr) {
  detail::check_fits<I>(std::max(a.rows, a.cols), "dimension");
  detail::check_fits<P>(a.nnz(), "entry count");
  Csr<I, P> c;
  c.rows = a.rows;
  c.cols = a.cols;
  c.row_ptr.assign(a.rows + 1, P{0});
  for (auto r : a.row) ++c.row_ptr[static_cast<std::int64_t>(r) + 1];
  for (std::int64_t r = 0; r < a.rows; ++r) c.row_ptr[r + 1] += c.row_ptr[r];
  c.col_idx.resize(a.nnz());
  c.val.resize(a.nnz());
  std::vector<P> next(c.row_ptr.begin(), c.row_ptr.end() - 1);
  for (std::int64_t k = 0; k < a.nnz(); ++k) {
    auto dst = static_cast<std::int64_t>(next[static_cast<std::int64_t>(a.row[k])]++);
    c.col_idx[dst] = static_cast<I>(a.col[k]);
    c.val[dst] = a.val[k];
  }
  detail::sort_rows(c);
  std::int64_t removed = detail::merge_duplicates(c);
  if (duplicates) *duplicates = removed;
  return c;
}

// CSR -> COO, row-major order.
template <class I, class P>
Coo<I> csr_to_coo(const Csr<I, P>& a) {
  Coo<I> c;
  c.rows = a.rows;
  c.cols = a.cols;
  c.row.resize(a.nnz());
  c.col = a.col_idx;
  c.val = a.val;
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (auto k = static_cast<std::int64_t>(a.row_ptr[r]); k < static_cast<std::int64_t>(a.row_ptr[r + 1]); ++k)
      c.row[k] = static_cast<I>(r);
  return c;
}

// Transpose of a CSR as a CSR (rows sorted, since rows are visited in order).
template <class I, class P>
Csr<I, P> transpose(const Csr<I, P>& a) {
  Csr<I, P> t;
  t.rows = a.cols;
  t.cols = a.rows;
  t.row_ptr.assign(a.cols + 1, P{0});
  for (auto c : a.col_idx) ++t.row_ptr[static_cast<std::int64_t>(c) + 1];
  for (std::int64_t c = 0; c < a.cols; ++c) t.row_ptr[c + 1] += t.row_ptr[c];
  t.col_idx.resize(a.nnz());
  t.val.resize(a.nnz());
  std::vector<P> next(t.row_ptr.begin(), t.row_ptr.end() - 1);
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (auto k = static_cast<std::int64_t>(a.row_ptr[r]); k < static_cast<std::int64_t>(a.row_ptr[r + 1]); ++k) {
      auto dst = static_cast<std::int64_t>(next[static_cast<std::int64_t>(a.col_idx[k])]++);
      t.col_idx[dst] = static_cast<I>(r);
      t.val[dst] = a.val[k];
    }
  return t;
}

// CSR -> CSC is the transpose's CSR read as columns.
template <class I, class P>
Csc<I, P> csr_to_csc(const Csr<I, P>& a) {
  Csr<I, P> t = transpose(a);
  return Csc<I, P>{a.rows, a.cols, std::move(t.row_ptr), std::move(t.col_idx), std::move(t.val)};
}

template <class I, class P>
Csr<I, P> csc_to_csr(const Csc<I, P>& a) {
  Csr<I, P> as_rows{a.cols, a.rows, a.col_ptr, a.row_idx, a.val};
  return transpose(as_rows);
}

// Re-types the indices of a CSR; throws when a dimension or offset does not fit.
template <class I2, class P2, class I, class P>
Csr<I2, P2> index_cast(const Csr<I, P>& a) {
  detail::check_fits<I2>(std::max(a.rows, a.cols), "dimension");
  detail::check_fits<P2>(a.nnz(), "entry count");
  Csr<I2, P2> c;
  c.rows = a.rows;
  c.cols = a.cols;
  c.row_ptr.assign(a.row_ptr.begin(), a.row_ptr.end());
  c.col_idx.assign(a.col_idx.begin(), a.col_idx.end());
  c.val = a.val;
  return c;
}

// Structural and numerical equality (same sparsity pattern, values within `tol` relative).
template <class I, class P>
bool same_matrix(const Csr<I, P>& a, const Csr<I, P>& b, double tol = 0.0) {
  if (a.rows != b.rows || a.cols != b.cols || a.row_ptr != b.row_ptr || a.col_idx != b.col_idx)
    return false;
  for (std::int64_t k = 0; k < a.nnz(); ++k) {
    double d = a.val[k] - b.val[k];
    double s = std::max(std::abs(a.val[k]), std::abs(b.val[k]));
    if (std::abs(d) > tol * s) return false;
  }
  return true;
}

}  // namespace sparsetune
