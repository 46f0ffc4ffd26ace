#include "runtime/sptv_kernel.hpp"

#include <limits>

#include "core/error.hpp"

namespace sparsetune::runtime {

Unfolding unfold(SparseTensor t, int mode) {
  if (mode < 0 || mode >= t.order())
    throw Error("sptv: mode " + std::to_string(mode) + " out of range for an order-" +
                std::to_string(t.order()) + " tensor");
  sort_by_modes(t, fiber_mode_order(t.order(), mode));
  merge_duplicates(t);
  const auto ptr = fiber_ptr(t, mode);
  const std::int64_t fibers = static_cast<std::int64_t>(ptr.size()) - 1;
  const std::int64_t lim = std::numeric_limits<std::int32_t>::max();
  if (fibers > lim || t.dims[mode] > lim || t.nnz() > lim)
    throw Error("sptv: the GPU baselines use 32-bit indices; this tensor is too large");
  Unfolding u;
  u.order = t.order();
  u.mode_dim = t.dims[mode];
  u.a.rows = fibers;
  u.a.cols = t.dims[mode];
  u.a.row_ptr.assign(ptr.begin(), ptr.end());
  u.a.col_idx.assign(t.idx[mode].begin(), t.idx[mode].end());
  u.a.val = t.val;
  u.fiber_of.resize(t.nnz());
  for (std::int64_t f = 0; f < fibers; ++f)
    for (auto e = ptr[f]; e < ptr[f + 1]; ++e) u.fiber_of[e] = static_cast<std::int32_t>(f);
  return u;
}

const std::string& sptv_coo_atomic_source() {
  static const std::string src = R"CUDA(
template <class T>
__device__ void sptv_coo_atomic(long long nnz, const int* __restrict__ fiber,
                                const int* __restrict__ k, const T* __restrict__ val,
                                const T* __restrict__ v, T* y) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < nnz; e += stride)
    atomicAdd(&y[fiber[e]], val[e] * v[k[e]]);
}
extern "C" __global__ void sptv_coo_atomic_f32(long long nnz, const int* fiber, const int* k,
                                               const float* val, const float* v, float* y) {
  sptv_coo_atomic<float>(nnz, fiber, k, val, v, y);
}
extern "C" __global__ void sptv_coo_atomic_f64(long long nnz, const int* fiber, const int* k,
                                               const double* val, const double* v, double* y) {
  sptv_coo_atomic<double>(nnz, fiber, k, val, v, y);
}
)CUDA";
  return src;
}

}  // namespace sparsetune::runtime
