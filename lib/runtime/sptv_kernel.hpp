#pragma once
// The element-wise COO SpTV kernel: one thread per non-zero adds val·v[k] atomically into the
// output entry of its fiber, the way ParTI! computes tensor-times-vector on the GPU.
#include <cstdint>
#include <string>
#include <vector>

#include "core/matrix.hpp"
#include "core/tensor.hpp"

namespace sparsetune::runtime {

// The tensor unfolded along `mode`: one CSR row per non-empty mode-`mode` fiber (in the order of
// sptv_reference's output), the mode index as column. SpMV with it is SpTV.
struct Unfolding {
  Csr32 a;
  std::vector<std::int32_t> fiber_of;  // row of each entry (the COO kernel's output index)
  int order = 0;
  std::int64_t mode_dim = 0;
};
// Sorts and merges duplicates of a copy of t; throws Error past 32-bit sizes or a bad mode.
Unfolding unfold(SparseTensor t, int mode);

// CUDA source defining extern "C" kernels sptv_coo_atomic_f32 and sptv_coo_atomic_f64 with the
// signature (long long nnz, const int* fiber, const int* k, const T* val, const T* v, T* y).
const std::string& sptv_coo_atomic_source();

}  // namespace sparsetune::runtime
