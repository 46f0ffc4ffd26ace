#include "features/matrix_profile.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace sparsetune::features {

double MatrixProfile::density() const {
  if (rows == 0 || cols == 0) return 0.0;
  return static_cast<double>(nnz) / (static_cast<double>(rows) * static_cast<double>(cols));
}

void check_csr(const Csr64& a) {
  if (a.rows < 0 || a.cols < 0) throw Error("matrix has a negative dimension");
  if (static_cast<std::int64_t>(a.row_ptr.size()) != a.rows + 1)
    throw Error("row_ptr has " + std::to_string(a.row_ptr.size()) + " entries, expected " +
                std::to_string(a.rows + 1));
  if (a.col_idx.size() != a.val.size())
    throw Error("col_idx and val differ in length (" + std::to_string(a.col_idx.size()) + " and " +
                std::to_string(a.val.size()) + ")");
  if (a.row_ptr.front() != 0 || a.row_ptr.back() != a.nnz())
    throw Error("row_ptr must run from 0 to nnz = " + std::to_string(a.nnz()));
  for (std::int64_t r = 0; r < a.rows; ++r)
    if (a.row_ptr[r + 1] < a.row_ptr[r])
      throw Error("row_ptr decreases at row " + std::to_string(r));
  for (auto c : a.col_idx)
    if (c < 0 || c >= a.cols)
      throw Error("column index " + std::to_string(c) + " outside [0, " + std::to_string(a.cols) +
                  ")");
}

MatrixProfile profile_matrix(const Csr64& a) {
  check_csr(a);
  MatrixProfile p;
  p.rows = a.rows;
  p.cols = a.cols;
  p.nnz = a.nnz();
  std::vector<std::int64_t> lengths(a.rows);
  for (std::int64_t r = 0; r < a.rows; ++r) lengths[r] = a.row_ptr[r + 1] - a.row_ptr[r];
  p.row_lengths = LengthHistogram(lengths);
  // A dense count per column is linear; a hypersparse matrix far wider than its entry count would
  // make that array the biggest thing in memory, so then count runs in a sorted copy instead.
  if (a.cols <= 2 * a.nnz() + 4096) {
    lengths.assign(a.cols, 0);
    for (auto c : a.col_idx) ++lengths[c];
    p.col_lengths = LengthHistogram(lengths);
  } else {
    std::vector<std::int64_t> sorted = a.col_idx;
    std::sort(sorted.begin(), sorted.end());
    lengths.clear();
    for (std::size_t k = 0; k < sorted.size(); ++k) {
      if (k > 0 && sorted[k] == sorted[k - 1])
        ++lengths.back();
      else
        lengths.push_back(1);
    }
    p.col_lengths = LengthHistogram(lengths, a.cols - static_cast<std::int64_t>(lengths.size()));
  }
  return p;
}

}  // namespace sparsetune::features
