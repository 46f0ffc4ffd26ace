#pragma once
// SpTV as SpMV: Y = X ×_mode v is the product of the mode-`mode` unfolding with v. Each row of
// the unfolding is a non-empty mode-`mode` fiber (an entry of Y); its columns are the indices
// along `mode`. IAP-SpTV slices the tensor along another mode; every row then belongs to one
// slice, and the rows of a slice form that slice's sparse matrix (fiber × mode index). Rows are
// ordered slice by slice (sptv_output_order), so each slice's entries of y are consecutive.
#include <cstdint>
#include <vector>

#include "core/matrix.hpp"
#include "core/tensor.hpp"

namespace sparsetune {

struct SptvMatrix {
  std::vector<std::int64_t> dims;  // the tensor's mode sizes
  int mode = 0;                    // the mode multiplied by v (the columns)
  int slice_mode = 0;              // the mode the tensor is sliced along
  // One row per non-empty fiber, in sptv_output_order; duplicates merged by summing.
  Csr64 a;
  std::vector<std::int64_t> row_slice;  // index along slice_mode of each row
  std::int64_t slices = 0;              // dims[slice_mode]: slices, empty ones included
};

// The mode IAP-SpTV slices along: the smallest mode other than `mode` (the lowest on a tie).
// Needs an order of at least 2.
int default_slice_mode(const SparseTensor& t, int mode);

// The order of Y's entries in the view, and so in y: by the slice mode first, then by the other
// remaining modes ascending (modes of X; `mode` is not among them). This is IAP-SpTV's output,
// stitched by slice number (Alg. 1, line 24): a slice's fibers are consecutive rows of y, so its
// kernel stores them coalesced. With the slice mode first among the remaining modes it is
// sptv_reference's lexicographic order.
std::vector<int> sptv_output_order(int order, int mode, int slice_mode);

// Throws Error on a bad mode, a slice mode equal to `mode`, or an order below 2.
// slice_mode -1: default_slice_mode.
SptvMatrix sptv_matrix(const SparseTensor& t, int mode, int slice_mode = -1);

// Per non-empty slice, ascending by index: HTF's sliceIdx and sliceNnz (slice s holds
// nnz[s] .. nnz[s+1]-1 of the entries counted slice by slice; the last entry is the total).
struct SliceTable {
  std::vector<std::int64_t> index;
  std::vector<std::int64_t> nnz;
};
SliceTable slice_table(const SptvMatrix& m);

// sptv_reference(x, mode, v) with its entries in the view's order (sptv_output_order), so that
// its values compare with y entry by entry.
SparseTensor sptv_reference_in_view_order(const SparseTensor& x, int mode, int slice_mode,
                                          const std::vector<double>& v);
inline SparseTensor sptv_reference_in_view_order(const SparseTensor& x, const SptvMatrix& m,
                                                 const std::vector<double>& v) {
  return sptv_reference_in_view_order(x, m.mode, m.slice_mode, v);
}

}  // namespace sparsetune
