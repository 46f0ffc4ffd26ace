#pragma once
// What most matrix feature sets are made of: the dimensions and the distributions of row and
// column lengths. Built once (a pass over row_ptr and one over col_idx) and shared by the groups.
#include <cstdint>

#include "core/matrix.hpp"
#include "features/length_histogram.hpp"

namespace sparsetune::features {

struct MatrixProfile {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
  LengthHistogram row_lengths;  // items = rows
  LengthHistogram col_lengths;  // items = cols
  double density() const;       // nnz / (rows · cols); 0 for an empty shape
};

// Throws Error unless `a` is a well-formed CSR: row_ptr of rows + 1 non-decreasing offsets from 0
// to nnz, and every column index inside [0, cols).
void check_csr(const Csr64& a);

// Checks `a` (check_csr) and builds its profile.
MatrixProfile profile_matrix(const Csr64& a);

}  // namespace sparsetune::features
