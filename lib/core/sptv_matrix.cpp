#include "core/sptv_matrix.hpp"

#include <string>

#include "core/error.hpp"
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

SptvMatrix sptv_matrix(SparseTensor t, int mode, int slice_mode) {
  if (mode < 0 || mode >= t.order())
    throw Error("sptv: mode " + std::to_string(mode) + " out of range for an order-" +
                std::to_string(t.order()) + " tensor");
  if (slice_mode == -1) slice_mode = default_slice_mode(t, mode);
  if (slice_mode < 0 || slice_mode >= t.order() || slice_mode == mode)
    throw Error("sptv: slice mode " + std::to_string(slice_mode) +
                " must be another mode of the order-" + std::to_string(t.order()) + " tensor");
  auto order = sptv_output_order(t.order(), mode, slice_mode);
  order.push_back(mode);  // fibers as contiguous runs, slice by slice
  sort_by_modes(t, order);
  merge_duplicates(t);
  const auto ptr = fiber_ptr(t, mode);
  SptvMatrix m;
  m.dims = t.dims;
  m.mode = mode;
  m.slice_mode = slice_mode;
  m.slices = t.dims[slice_mode];
  m.a.rows = static_cast<std::int64_t>(ptr.size()) - 1;
  m.a.cols = t.dims[mode];
  m.a.row_ptr.assign(ptr.begin(), ptr.end());
  m.a.col_idx = std::move(t.idx[mode]);
  m.a.val = std::move(t.val);
  m.row_slice.resize(m.a.rows);
  for (std::int64_t r = 0; r < m.a.rows; ++r) m.row_slice[r] = t.idx[slice_mode][ptr[r]];
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
  SparseTensor y = sptv_reference(x, mode, v);
  // Y's modes are X's without `mode`: X's mode k is Y's k - (k > mode).
  std::vector<int> order;
  for (int k : sptv_output_order(x.order(), mode, slice_mode))
    order.push_back(k - (k > mode ? 1 : 0));
  sort_by_modes(y, order);
  return y;
}

}  // namespace sparsetune
