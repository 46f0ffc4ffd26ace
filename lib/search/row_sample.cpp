#include "search/row_sample.hpp"

#include <algorithm>

namespace sparsetune::search {

RowSample sample_rows(const Csr64& a, std::int64_t target_nnz, int windows) {
  RowSample s;
  if (a.nnz() <= target_nnz || a.rows == 0 || windows < 1) {
    s.matrix = a;
    return s;
  }
  const std::int64_t per_window = std::max<std::int64_t>(1, target_nnz / windows);
  Csr64& m = s.matrix;
  m.cols = a.cols;
  m.row_ptr.push_back(0);
  std::int64_t next_free = 0;  // windows never overlap
  for (int w = 0; w < windows; ++w) {
    std::int64_t r = std::max(next_free, a.rows * w / windows);
    const std::int64_t start_nnz = a.row_ptr[std::min(r, a.rows)];
    while (r < a.rows && a.row_ptr[r] - start_nnz < per_window) {  // at least one row
      for (auto k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
        m.col_idx.push_back(a.col_idx[k]);
        m.val.push_back(a.val[k]);
      }
      m.row_ptr.push_back(static_cast<std::int64_t>(m.col_idx.size()));
      ++r;
    }
    next_free = r;
    if (r >= a.rows) break;
  }
  m.rows = static_cast<std::int64_t>(m.row_ptr.size()) - 1;
  s.scale = m.nnz() > 0 ? static_cast<double>(a.nnz()) / static_cast<double>(m.nnz()) : 1.0;
  return s;
}

}  // namespace sparsetune::search
