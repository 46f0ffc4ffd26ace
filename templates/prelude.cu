//@ common
// Self-contained: no headers, so that nvcc and NVRTC compile the same text.
#define ST_FULL_MASK 0xffffffffu
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
