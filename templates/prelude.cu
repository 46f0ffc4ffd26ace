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
