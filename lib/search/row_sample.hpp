#pragma once
// A row sample of a large matrix for the cost model: evenly spaced windows of consecutive rows,
// columns untouched, so that row lengths, their neighbourhoods and the column spread of x stay
// representative while designing a candidate costs a fraction of the full matrix.
#include <cstdint>

#include "core/matrix.hpp"

namespace sparsetune::search {

struct RowSample {
  Csr64 matrix;        // the sampled rows, in their original order
  double scale = 1.0;  // nnz of the full matrix over nnz of the sample (1 when not sampled)
};

// Returns `a` itself (scale 1) when it has at most `target_nnz` entries; otherwise `windows`
// windows of consecutive rows, each starting at an evenly spaced row and holding about
// target_nnz / windows entries (at least one row each).
RowSample sample_rows(const Csr64& a, std::int64_t target_nnz, int windows = 64);

}  // namespace sparsetune::search
