#include "core/sptv_matrix.hpp"

#include <numeric>
#include <string>

#include "core/error.hpp"
#include "core/parallel_for.hpp"
#include "core/reference.hpp"

namespace sparsetune {

int default_slice_mode(const SparseTensor& t, int mode) {
  int best = -1;
  for (int m = 0; m < t.order(); ++m)
    if (m != mode && (best < 0 || t.dims[m] < t.dims[best])) best = m;
  if (best < 0) throw Error("sptv: slices need a tensor of order 2 or more");
  return best;
}

std::vector<int> sptv_output_order(int order, int mode, int slice_mode) {
  std::vector<int> o{slice_mode};
  for (int k = 0; k < order; ++k)
    if (k != mode && k != slice_mode) o.push_back(k);
  return o;
}

SptvMatrix sptv_matrix(const SparseTensor& x, int mode, int slice_mode) {
  if (mode < 0 || mode >= x.order())
    throw Error("sptv: mode " + std::to_string(mode) + " out of range for an order-" +
                std::to_string(x.order()) + " tensor");
  if (slice_mode == -1) slice_mode = default_slice_mode(x, mode);
  if (slice_mode < 0 || slice_mode >= x.order() || slice_mode == mode)
    throw Error("sptv: slice mode " + std::to_string(slice_mode) +
                " must be another mode of the order-" + std::to_string(x.order()) + " tensor");
  auto order = sptv_output_order(x.order(), mode, slice_mode);
  order.push_back(mode);  // fibers as contiguous runs, slice by slice
  // The view's arrays gathered through the sorting permutation: the tensor is not copied. With
  // repeated coordinates (summed), a sorted copy is merged first.
  std::vector<std::int64_t> perm = sorted_order(x, order);
  SparseTensor merged;
  const SparseTensor* t = &x;
  if (has_repeats(x, perm)) {
    merged = x;
    sort_by_modes(merged, order);
    merge_duplicates(merged);
    perm.resize(merged.nnz());
    std::iota(perm.begin(), perm.end(), 0);
    t = &merged;
  }
  const std::int64_t n = t->nnz();
  const int threads = threads_for(n);
  std::vector<std::int64_t> ptr = fiber_ptr(*t, perm, mode);
  SptvMatrix m;
  m.dims = t->dims;
  m.mode = mode;
  m.slice_mode = slice_mode;
  m.slices = t->dims[slice_mode];
  m.a.rows = static_cast<std::int64_t>(ptr.size()) - 1;
  m.a.cols = t->dims[mode];
  m.a.col_idx.resize(n);
  m.a.val.resize(n);
  parallel_ranges(n, threads, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t k = lo; k < hi; ++k) {
      m.a.col_idx[k] = t->idx[mode][perm[k]];
      m.a.val[k] = t->val[perm[k]];
    }
  });
  m.row_slice.resize(m.a.rows);
  parallel_ranges(m.a.rows, threads, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t r = lo; r < hi; ++r) m.row_slice[r] = t->idx[slice_mode][perm[ptr[r]]];
  });
  m.a.row_ptr = std::move(ptr);
  return m;
}

SliceTable slice_table(const SptvMatrix& m) {
  std::vector<std::int64_t> count(m.slices, 0);
  for (std::int64_t r = 0; r < m.a.rows; ++r) count[m.row_slice[r]] += m.a.row_length(r);
  SliceTable s;
  s.nnz.push_back(0);
  for (std::int64_t i = 0; i < m.slices; ++i)
    if (count[i] > 0) {
      s.index.push_back(i);
      s.nnz.push_back(s.nnz.back() + count[i]);
    }
  return s;
}

SparseTensor sptv_reference_in_view_order(const SparseTensor& x, int mode, int slice_mode,
                                          const std::vector<double>& v) {
  return sptv_reference(x, mode, v, sptv_output_order(x.order(), mode, slice_mode));
}

}  // namespace sparsetune
