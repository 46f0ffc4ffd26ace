#include "core/sptv_matrix.hpp"

#include <string>

#include "core/error.hpp"

namespace sparsetune {

int default_slice_mode(const SparseTensor& t, int mode) {
  int best = -1;
  for (int m = 0; m < t.order(); ++m)
    if (m != mode && (best < 0 || t.dims[m] < t.dims[best])) best = m;
  if (best < 0) throw Error("sptv: slices need a tensor of order 2 or more");
  return best;
}

SptvMatrix sptv_matrix(SparseTensor t, int mode, int slice_mode) {
  if (mode < 0 || mode >= t.order())
    throw Error("sptv: mode " + std::to_string(mode) + " out of range for an order-" +
                std::to_string(t.order()) + " tensor");
  if (slice_mode == -1) slice_mode = default_slice_mode(t, mode);
  if (slice_mode < 0 || slice_mode >= t.order() || slice_mode == mode)
    throw Error("sptv: slice mode " + std::to_string(slice_mode) +
                " must be another mode of the order-" + std::to_string(t.order()) + " tensor");
  sort_by_modes(t, fiber_mode_order(t.order(), mode));
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

}  // namespace sparsetune
