#pragma once
// SpTV as SpMV: Y = X ×_mode v is the product of the mode-`mode` unfolding with v. Each row of
// the unfolding is a non-empty mode-`mode` fiber (an entry of Y); its columns are the indices
// along `mode`. IAP-SpTV slices the tensor along another mode; every row then belongs to one
// slice, and the rows of a slice form that slice's sparse matrix (fiber × mode index).
#include <cstdint>
#include <vector>

#include "core/matrix.hpp"
#include "core/tensor.hpp"

namespace sparsetune {

struct SptvMatrix {
  std::vector<std::int64_t> dims;  // the tensor's mode sizes
  int mode = 0;                    // the mode multiplied by v (the columns)
  int slice_mode = 0;              // the mode the tensor is sliced along
  // One row per non-empty fiber, in the order of sptv_reference's output entries (lexicographic
  // by the remaining modes); duplicates merged by summing.
  Csr64 a;
  std::vector<std::int64_t> row_slice;  // index along slice_mode of each row
  std::int64_t slices = 0;              // dims[slice_mode]: slices, empty ones included
};

// The mode IAP-SpTV slices along: the smallest mode other than `mode` (the lowest on a tie).
// Needs an order of at least 2.
int default_slice_mode(const SparseTensor& t, int mode);

// Throws Error on a bad mode, a slice mode equal to `mode`, or an order below 2.
// slice_mode -1: default_slice_mode.
SptvMatrix sptv_matrix(SparseTensor t, int mode, int slice_mode = -1);

// Per non-empty slice, ascending by index: HTF's sliceIdx and sliceNnz (slice s holds
// nnz[s] .. nnz[s+1]-1 of the entries counted slice by slice; the last entry is the total).
struct SliceTable {
  std::vector<std::int64_t> index;
  std::vector<std::int64_t> nnz;
};
SliceTable slice_table(const SptvMatrix& m);

}  // namespace sparsetune
