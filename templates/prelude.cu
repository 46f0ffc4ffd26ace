//@ common
// Self-contained: no headers, so that nvcc and NVRTC compile the same text.
#define ST_FULL_MASK 0xffffffffu
// sum += v * x[col] for a stored entry. A stored zero (padding, or an explicit zero of the
// matrix) contributes nothing, whatever x holds: padding never turns an infinite x into NaN. The
// product is dropped rather than the load skipped, so x is still read (its column is always in
// the matrix) and no load waits on the value.
#define ST_MAC(sum, v, col)                                       \
  do {                                                            \
    const st_acc_t st_v_ = (v);                                   \
    const st_acc_t st_p_ = st_v_ * st_load(x[(col)]);             \
    (sum) += st_v_ != (st_acc_t)0 ? st_p_ : (st_acc_t)0;          \
  } while (0)
//@ idx32
// Every row, column, entry and array index of this matrix (and any sum of them the loops form)
// fits in 31 bits: 32-bit index arithmetic, one instruction where 64-bit takes two or more.
typedef int st_idx_t;
//@ idx64
typedef long long st_idx_t;  // some index of this matrix needs more than 31 bits
//@ f64
typedef double st_val_t;  // stored values and x
typedef double st_acc_t;  // accumulation and y
static __device__ __forceinline__ st_acc_t st_load(st_val_t v) { return v; }
//@ f32
typedef float st_val_t;  // stored values and x
typedef float st_acc_t;  // accumulation and y
static __device__ __forceinline__ st_acc_t st_load(st_val_t v) { return v; }
//@ f16
typedef unsigned short st_val_t;  // IEEE fp16 bits: stored values and x
typedef float st_acc_t;           // fp32 accumulation and y
static __device__ __forceinline__ st_acc_t st_load(st_val_t h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
//@ spmm
// SpMM: a thread's value is a tile of TN columns of C (st_tile), registers when indices are
// static. Fragments are written against one value; the Kernel Builder gives them st_tile_t
// (the part's tile) where SpMV has st_acc_t, and these overloads make +=, the shuffles and the
// shared-memory atomics act column by column.
template <int TN>
struct st_tile {
  st_acc_t v[TN];
  st_tile() = default;  // trivial: tiles may live in shared memory
  __device__ __forceinline__ st_tile(st_acc_t s) {
#pragma unroll
    for (int j = 0; j < TN; ++j) v[j] = s;
  }
  __device__ __forceinline__ st_tile& operator+=(const st_tile& o) {
#pragma unroll
    for (int j = 0; j < TN; ++j) v[j] += o.v[j];
    return *this;
  }
};
#define ST_TILE_SHFL(name)                                                           \
  template <int TN>                                                                 \
  static __device__ __forceinline__ st_tile<TN> name(unsigned mask, const st_tile<TN>& t, \
                                                     int d) {                       \
    st_tile<TN> r;                                                                  \
    _Pragma("unroll") for (int j = 0; j < TN; ++j) r.v[j] = name(mask, t.v[j], d);   \
    return r;                                                                       \
  }
ST_TILE_SHFL(__shfl_xor_sync)
ST_TILE_SHFL(__shfl_up_sync)
ST_TILE_SHFL(__shfl_down_sync)
#undef ST_TILE_SHFL
template <int TN>
static __device__ __forceinline__ void atomicAdd(st_tile<TN>* p, const st_tile<TN>& t) {
#pragma unroll
  for (int j = 0; j < TN; ++j) atomicAdd(&p->v[j], t.v[j]);
}
// tile += v * bv, column by column. As in SpMV, a stored zero adds nothing whatever B holds: the
// products are dropped, not the loads skipped. One test per entry rather than per column: the tile
// then takes one fused multiply-add per column (a multiply, a select and an add per column before).
template <int TN>
static __device__ __forceinline__ void st_tile_fma(st_tile<TN>& s, const st_acc_t v,
                                                   const st_acc_t (&bv)[TN]) {
  if (v == (st_acc_t)0) return;
#pragma unroll
  for (int j = 0; j < TN; ++j) s.v[j] += v * bv[j];
}
// A B row segment loaded VEC values at a time (aligned: the kernel checks st_vec_ok).
template <int VEC>
struct alignas(VEC * sizeof(st_val_t)) st_vec {
  st_val_t v[VEC];
};
// The B row segment of a whole tile, loaded VEC values at a time (aligned: st_vec_ok).
template <int VEC, int TN>
static __device__ __forceinline__ void st_load_tile_full(st_tile<TN>& bt,
                                                         const st_val_t* __restrict__ b) {
#pragma unroll
  for (int j = 0; j < TN; j += VEC) {
    const st_vec<VEC> w = *reinterpret_cast<const st_vec<VEC>*>(b + j);
#pragma unroll
    for (int q = 0; q < VEC; ++q) bt.v[j + q] = st_load(w.v[q]);
  }
}
// tile += v * B[col, n0 .. n0 + TN) for a whole tile and B aligned to VEC: vector loads, no
// branch. ST_MAC_FULL calls it where that was decided once per row (ST_TILE_FULL), so the B loads
// of consecutive entries can be in flight together.
template <int VEC, int TN>
static __device__ __forceinline__ void st_mac_tile_full(st_tile<TN>& s, const st_acc_t v,
                                                        const st_val_t* __restrict__ b) {
  st_tile<TN> bt;
  st_load_tile_full<VEC>(bt, b);
  st_tile_fma(s, v, bt.v);
}
// tile += v * B[col, n0 .. n0 + TN): columns at and beyond n (st_nt of them are in C) are neither
// read nor kept. As in SpMV, a stored zero adds nothing whatever B holds.
template <int VEC, int TN>
static __device__ __forceinline__ void st_mac_tile(st_tile<TN>& s, const st_acc_t v,
                                                   const st_val_t* __restrict__ b, const int nt,
                                                   const bool vec_ok) {
  if (nt == TN && vec_ok) return st_mac_tile_full<VEC>(s, v, b);
  st_acc_t bv[TN];
#pragma unroll
  for (int j = 0; j < TN; ++j) bv[j] = j < nt ? st_load(b[j]) : (st_acc_t)0;
  st_tile_fma(s, v, bv);
}
#undef ST_MAC
#define ST_MAC(sum, v, col) \
  st_mac_tile<st_vec>((sum), (v), B + (long long)(col) * ldb + st_n0, st_nt, st_vec_ok)
template <int TN>
static __device__ __forceinline__ bool st_tile_full(const st_tile<TN>&, const int nt,
                                                    const bool vec_ok) {
  return nt == TN && vec_ok;
}
#define ST_MAC_FULL(sum, v, col) \
  st_mac_tile_full<st_vec>((sum), (v), B + (long long)(col) * ldb + st_n0)
#define ST_TILE_FULL(sum) st_tile_full((sum), st_nt, st_vec_ok)
// The same in two steps, for fragments that issue a batch's loads before its multiply-adds:
// bt = B[col, n0 .. n0 + TN) of a whole tile, then sum += v * bt.
#define ST_LOAD_FULL(bt, col) st_load_tile_full<st_vec>((bt), B + (long long)(col) * ldb + st_n0)
#define ST_FMA(sum, a, bt) st_tile_fma((sum), (a), (bt).v)
// The sinks: a finished C tile of one row, masked to the st_nt columns of C this block covers.
template <int TN>
static __device__ __forceinline__ void st_tile_store(st_acc_t* c, const st_acc_t alpha,
                                                     const st_acc_t beta, const st_tile<TN>& t,
                                                     const int nt) {
#pragma unroll
  for (int j = 0; j < TN; ++j)
    if (j < nt) c[j] = beta == (st_acc_t)0 ? alpha * t.v[j] : alpha * t.v[j] + beta * c[j];
}
template <int TN>
static __device__ __forceinline__ void st_tile_add(st_acc_t* c, const st_acc_t alpha,
                                                   const st_tile<TN>& t, const int nt) {
#pragma unroll
  for (int j = 0; j < TN; ++j)
    if (j < nt) c[j] += alpha * t.v[j];
}
// A whole fp32 tile on sm_90 adds by vector reductions (red.global.add.v4 / .v2.f32) where C is
// aligned: a quarter (a half) of the atomic operations for the same additions. False where it
// does not apply (fp64, older GPUs, a partial or misaligned tile): the caller adds per column.
template <int TN>
static __device__ __forceinline__ bool st_tile_red_vec(float* c, const float alpha,
                                                       const st_tile<TN>& t, const int nt) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (TN % 2 == 0) {
    if (nt != TN) return false;
    const unsigned long long a = (unsigned long long)c;
    if (TN % 4 == 0 && (a & 15) == 0) {
#pragma unroll
      for (int j = 0; j < TN; j += 4)
        asm volatile(
            "{ .reg .u64 g; cvta.to.global.u64 g, %0; red.global.add.v4.f32 [g], {%1, %2, %3, %4}; }"
            :
            : "l"(c + j), "f"(alpha * t.v[j]), "f"(alpha * t.v[j + 1]), "f"(alpha * t.v[j + 2]),
              "f"(alpha * t.v[j + 3])
            : "memory");
      return true;
    }
    if ((a & 7) == 0) {
#pragma unroll
      for (int j = 0; j < TN; j += 2)
        asm volatile("{ .reg .u64 g; cvta.to.global.u64 g, %0; red.global.add.v2.f32 [g], {%1, %2}; }"
                     :
                     : "l"(c + j), "f"(alpha * t.v[j]), "f"(alpha * t.v[j + 1])
                     : "memory");
      return true;
    }
  }
#endif
  (void)c, (void)alpha, (void)t, (void)nt;
  return false;
}
template <int TN>
static __device__ __forceinline__ bool st_tile_red_vec(double*, const double, const st_tile<TN>&,
                                                       const int) {
  return false;
}
template <int TN>
static __device__ __forceinline__ void st_tile_atomic_add(st_acc_t* c, const st_acc_t alpha,
                                                          const st_tile<TN>& t, const int nt) {
  if (st_tile_red_vec(c, alpha, t, nt)) return;
#pragma unroll
  for (int j = 0; j < TN; ++j)
    if (j < nt) atomicAdd(&c[j], alpha * t.v[j]);
}
//@ spmm_col
// Column-major B and C (Format::layout "col"): B(i, j) = B[i + j * ldb], C(i, j) = C[i + j * ldc].
// A tile's B segment and C segment are then strided by ldb and ldc: loaded and written one value
// at a time (no vector loads), the same masking and the same rule for stored zeros as above.
template <int TN>
static __device__ __forceinline__ void st_mac_tile_cm(st_tile<TN>& s, const st_acc_t v,
                                                      const st_val_t* __restrict__ b,
                                                      const long long ld, const int nt) {
  st_acc_t bv[TN];
#pragma unroll
  for (int j = 0; j < TN; ++j) bv[j] = j < nt ? st_load(b[j * ld]) : (st_acc_t)0;
  st_tile_fma(s, v, bv);
}
#undef ST_MAC
#define ST_MAC(sum, v, col) \
  st_mac_tile_cm((sum), (v), B + (long long)(col) + st_n0 * ldb, ldb, st_nt)
// No vector path: every tile takes ST_MAC's masked loads.
#undef ST_MAC_FULL
#undef ST_TILE_FULL
#define ST_MAC_FULL(sum, v, col) ST_MAC(sum, v, col)
#define ST_TILE_FULL(sum) false
#undef ST_LOAD_FULL
#define ST_LOAD_FULL(bt, col) ((void)(bt), (void)(col))
template <int TN>
static __device__ __forceinline__ void st_tile_store_cm(st_acc_t* c, const long long ld,
                                                        const st_acc_t alpha, const st_acc_t beta,
                                                        const st_tile<TN>& t, const int nt) {
#pragma unroll
  for (int j = 0; j < TN; ++j)
    if (j < nt)
      c[j * ld] = beta == (st_acc_t)0 ? alpha * t.v[j] : alpha * t.v[j] + beta * c[j * ld];
}
template <int TN>
static __device__ __forceinline__ void st_tile_add_cm(st_acc_t* c, const long long ld,
                                                      const st_acc_t alpha, const st_tile<TN>& t,
                                                      const int nt) {
#pragma unroll
  for (int j = 0; j < TN; ++j)
    if (j < nt) c[j * ld] += alpha * t.v[j];
}
template <int TN>
static __device__ __forceinline__ void st_tile_atomic_add_cm(st_acc_t* c, const long long ld,
                                                             const st_acc_t alpha,
                                                             const st_tile<TN>& t, const int nt) {
#pragma unroll
  for (int j = 0; j < TN; ++j)
    if (j < nt) atomicAdd(&c[j * ld], alpha * t.v[j]);
}
