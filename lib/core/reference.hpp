#pragma once
// CPU fp64 reference kernels: the ground truth every generated kernel is checked against.
#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "core/matrix.hpp"
#include "core/tensor.hpp"

namespace sparsetune {

// y = A·x. A stored zero contributes nothing, whatever x holds at its column: the generated
// kernels skip stored zeros (their padding as well as a matrix's explicit zeros), so NaN and
// infinities in x propagate through exactly the non-zero entries, as IEEE arithmetic says.
template <class I, class P>
std::vector<double> spmv_reference(const Csr<I, P>& a, const std::vector<double>& x) {
  if (static_cast<std::int64_t>(x.size()) != a.cols)
    throw Error("spmv: x has " + std::to_string(x.size()) + " entries, matrix has " +
                std::to_string(a.cols) + " columns");
  std::vector<double> y(a.rows, 0.0);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    double s = 0.0;
    for (auto k = static_cast<std::int64_t>(a.row_ptr[r]);
         k < static_cast<std::int64_t>(a.row_ptr[r + 1]); ++k)
      if (a.val[k] != 0.0) s += a.val[k] * x[static_cast<std::int64_t>(a.col_idx[k])];
    y[r] = s;
  }
  return y;
}

// C = A·B with B (cols × n) and C (rows × n) dense and row-major. Rows are independent, so a
// large product (a tune's check of a million-row matrix at n = 128 is about 10^9 multiply-adds)
// is split over the cores in row ranges; every row sums in the same order, so the result is the
// same bit for bit whatever the thread count.
template <class I, class P>
std::vector<double> spmm_reference(const Csr<I, P>& a, const std::vector<double>& b,
                                   std::int64_t n) {
  if (n < 1 || static_cast<std::int64_t>(b.size()) != a.cols * n)
    throw Error("spmm: B must be " + std::to_string(a.cols) + " x " + std::to_string(n));
  std::vector<double> c(a.rows * n, 0.0);
  auto rows = [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r)
      for (auto k = static_cast<std::int64_t>(a.row_ptr[r]);
           k < static_cast<std::int64_t>(a.row_ptr[r + 1]); ++k) {
        const double v = a.val[k];
        const double* brow = &b[static_cast<std::int64_t>(a.col_idx[k]) * n];
        double* crow = &c[r * n];
        for (std::int64_t j = 0; j < n; ++j) crow[j] += v * brow[j];
      }
  };
  const std::int64_t work = static_cast<std::int64_t>(a.nnz()) * n;
  const auto cores = static_cast<std::int64_t>(std::thread::hardware_concurrency());
  const std::int64_t threads =
      std::clamp<std::int64_t>(std::min(cores, work / (std::int64_t{1} << 24)), 1, 64);
  if (threads <= 1 || a.rows < threads) {
    rows(0, a.rows);
    return c;
  }
  std::vector<std::thread> pool;
  for (std::int64_t t = 0; t < threads; ++t)
    pool.emplace_back(rows, a.rows * t / threads, a.rows * (t + 1) / threads);
  for (auto& th : pool) th.join();
  return c;
}

// Y = X ×_mode v: an order-(N-1) sparse tensor with one entry per non-empty mode-`mode` fiber,
// sorted lexicographically by its remaining modes.
SparseTensor sptv_reference(const SparseTensor& x, int mode, const std::vector<double>& v);

// The same Y with its entries sorted by `y_order`: X's modes other than `mode`, in any order
// (Y's modes stay X's remaining modes ascending). Sums every fiber in the order of its indices
// along `mode` (repeated coordinates in their order in X), whatever `y_order`; fibers are summed
// on every core for large tensors.
SparseTensor sptv_reference(const SparseTensor& x, int mode, const std::vector<double>& v,
                            const std::vector<int>& y_order);

// ||a - b||_2 / ||b||_2 (or ||a - b||_2 when b is all zero).
double relative_l2_error(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace sparsetune
