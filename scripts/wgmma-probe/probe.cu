// wgmma probe: is wgmma.mma_async (sm_90a) faster than mma.sync.m16n8k8 for the tensor-core hot
// part of MatXtract's SpMV (TACO'26, §4.2.1), fp16 values and x, fp32 accumulation and y?
//
// Both kernels read the same dense-unfolding storage of a synthetic hot region (lib/core/crux.hpp):
// chunks of 8 rows; per chunk its distinct columns packed contiguously and cut into TC blocks of
// 8 columns; per block a 64-bit bitmap (bit 8r + c = row r, block column c), its 8 columns
// (tc_col) and the offset of its first value (tc_ptr); values packed in bitmap order.
//
//  - spmv_mma  (kernel A): templates/tc_mma_f16.cu. A warp takes a chunk, one mma.sync.m16n8k8
//    per 8x8 block; the block is the B operand (transposed), x at its columns the A operand, and
//    D's diagonal holds the 8 row sums.
//  - spmv_wgmma (kernel B): a warpgroup takes 8 chunks (64 rows), one
//    wgmma.mma_async.m64n8k16 per two consecutive blocks of each chunk (a k16 step). The values
//    are the A operand, decoded from the bitmaps straight into registers; x gathered at each
//    chunk's 16 columns is the B operand in shared memory, chunk n in column n; D[8n + r][n] is
//    row r of chunk n (block diagonal).
//
// PTX ISA sections relied on (names; the numbering moves between ISA versions):
//  - "Warp Level Matrix Multiply-Accumulate Instructions", mma.m16n8k8 .f16 fragment layouts
//    (anchor #warp-level-matrix-fragment-mma-1688).
//  - "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions":
//    "Register Fragments and Shared Memory Matrix Layouts" (wgmma .m64nNk16 A and D fragments),
//    "Shared Memory Matrix Layout" (8x16-byte core matrices, K-major, no swizzle),
//    "Matrix Descriptor Format" (#asynchronous-warpgroup-level-matrix-shared-memory-layout-
//    matrix-descriptor), wgmma.mma_async, wgmma.fence, wgmma.commit_group, wgmma.wait_group.
//  - "Parallel Synchronization and Communication Instructions: membar/fence", fence.proxy.async
//    (generic-proxy stores made visible to the async proxy that wgmma reads shared memory with).
//
// Build: nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a probe.cu  (or -arch=sm_90a)
// Run:   probe                      built-in configurations
//        probe ROWS CMIN CMAX DENSITY NCOLS   one configuration (CMIN, CMAX multiples of 8)
//        probe --cpu [ROWS CMIN CMAX DENSITY NCOLS]   no GPU: both kernels emulated on the CPU
//                                   (index math and fragment mappings; see emulate_config)
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#define CUDA_CHECK(call)                                                 \
  do {                                                                   \
    const cudaError_t err_ = (call);                                     \
    if (err_ != cudaSuccess) {                                           \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
                   cudaGetErrorString(err_));                            \
      std::exit(2);                                                      \
    }                                                                    \
  } while (0)

namespace {

constexpr int kChunkRows = 8;  // TC block height (rows per chunk)
constexpr int kBlockCols = 8;  // TC block width (columns per block)
constexpr int kWarmRuns = 200;
constexpr int kFlushRuns = 50;
constexpr double kTolerance = 1e-2;

// ---------------------------------------------------------------------------------------------
// Device side
// ---------------------------------------------------------------------------------------------

// The dense unfolding on the device. Indices are 32-bit: the largest configuration has < 2^31
// values and blocks.
struct DevHot {
  int chunks = 0;
  const int* chunk_ptr = nullptr;              // [chunks + 1] first block of each chunk
  const unsigned long long* tc_bit = nullptr;  // [blocks]
  const int* tc_col = nullptr;                 // [blocks * 8]
  const int* tc_ptr = nullptr;                 // [blocks + 1]
  const unsigned short* val = nullptr;         // [nnz] fp16 bits
};

// Read-only loads: __ldg on the device, plain loads in the CPU emulation (probe --cpu), which runs
// block_pair() itself.
template <class T>
__host__ __device__ __forceinline__ T ld_ro(const T* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);
#else
  return *p;
#endif
}

__host__ __device__ __forceinline__ int popc64(unsigned long long v) {
#if defined(__CUDA_ARCH__)
  return __popcll(v);
#else
  return __builtin_popcountll(v);
#endif
}

__host__ __device__ __forceinline__ unsigned short ld_u16(const unsigned short* p) {
  return ld_ro(p);
}

// Lane l's two slots of block b are bits 2l and 2l + 1 of its bitmap: row l / 4, block columns
// 2(l % 4) and 2(l % 4) + 1. This is the same (row, column pair) that both the m16n8k8 B
// fragment (transposed) and the m64n8k16 A fragment give lane l, so both kernels share it.
// Returns the two values as an f16x2 (low half = the even column), zero for an empty slot or a
// block past the chunk's end; set0 / set1 tell which slots hold an entry.
__host__ __device__ __forceinline__ unsigned block_pair(const DevHot& h, int b, int b_end, int lane,
                                                        bool& set0, bool& set1) {
  set0 = set1 = false;
  if (b >= b_end) return 0u;
  const unsigned long long bits = ld_ro(&h.tc_bit[b]);
  const int bit = 2 * lane;
  // Entries of the block are stored in bit order, so slot 2l sits after the set bits below it.
  int at = ld_ro(&h.tc_ptr[b]) + popc64(bits & ((1ull << bit) - 1ull));
  set0 = (bits >> bit) & 1ull;
  set1 = (bits >> (bit + 1)) & 1ull;
  const unsigned v0 = set0 ? ld_u16(&h.val[at]) : 0u;
  at += set0 ? 1 : 0;
  const unsigned v1 = set1 ? ld_u16(&h.val[at]) : 0u;
  return v0 | (v1 << 16);
}

// Kernel A: one warp per chunk (8 rows), one mma.sync.m16n8k8 per TC block. Lane l (g = l / 4,
// t = l % 4) holds A[g][2t..2t+1] = x at the block's columns 2t, 2t+1 (rows 8-15 of A are zero)
// and B[2t..2t+1][g] = row g's values at those columns, so every row of D is the 8 row sums and
// the diagonal D[g][g] sits in lane 4g + g/2, register g % 2 (m16n8 C/D fragment: c0, c1 are
// row g, columns 2t, 2t+1). A slot without an entry gives x = 0 (an infinite x must not reach a
// row through a zero value).
__global__ void __launch_bounds__(256)
    spmv_mma(DevHot h, const unsigned short* __restrict__ x, float* __restrict__ y) {
  const int lane = threadIdx.x & 31;
  const int chunk = blockIdx.x * (blockDim.x / 32) + (threadIdx.x >> 5);
  if (chunk >= h.chunks) return;
  const int b_beg = __ldg(&h.chunk_ptr[chunk]), b_end = __ldg(&h.chunk_ptr[chunk + 1]);
  const int t = lane & 3;
  float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
#pragma unroll 4
  for (int b = b_beg; b < b_end; ++b) {
    bool set0, set1;
    const unsigned bv = block_pair(h, b, b_end, lane, set0, set1);
    // Columns 2t and 2t + 1 of the block: one aligned 8-byte load.
    const int2 col = __ldg(reinterpret_cast<const int2*>(&h.tc_col[b * kBlockCols + 2 * t]));
    const unsigned x0 = set0 ? ld_u16(&x[col.x]) : 0u;
    const unsigned x1 = set1 ? ld_u16(&x[col.y]) : 0u;
    const unsigned a01 = x0 | (x1 << 16);
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
        : "r"(a01), "r"(0u), "r"(bv));
  }
  const int g = lane >> 2;
  if (t == (g >> 1)) y[chunk * kChunkRows + g] = (g & 1) ? d1 : d0;
}

// ---- wgmma helpers (sm_90a only) ----

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
constexpr bool kHasWgmma = true;
#else
constexpr bool kHasWgmma = false;
#endif

// Shared-memory matrix descriptor (Matrix Descriptor Format): bits 0-13 start address >> 4,
// bits 16-29 leading-dimension byte offset >> 4, bits 32-45 stride-dimension byte offset >> 4,
// bits 49-51 base offset (0: no swizzle), bits 62-63 swizzle mode (0: none).
//
// B is K-major (imm-trans-b = 0, the layout wgmma takes without transposition): a core matrix is
// 8 columns n of B, each 8 consecutive k of 2 bytes, 16 bytes per n, 128 bytes contiguous. The
// k16 tile is two core matrices, k 0-7 then k 8-15, 128 bytes apart; the leading byte offset
// (LBO) is the step between core matrices along K, the stride byte offset (SBO) the step
// between 8-column groups along N. With N = 8 there is one group, so SBO is never applied; it
// is set to 128 as well, so that the descriptor stays right even if LBO and SBO were read the
// other way round for this no-swizzle, K-major case.
constexpr unsigned kCoreBytes = 128;

// Base offset 0 and swizzle mode 0 (bits 49-51, 62-63) stay zero.
__host__ __device__ constexpr unsigned long long desc_encode(unsigned smem_addr) {
  return ((smem_addr & 0x3FFFFu) >> 4) |                             // start address
         (static_cast<unsigned long long>(kCoreBytes >> 4) << 16) |  // LBO
         (static_cast<unsigned long long>(kCoreBytes >> 4) << 32);   // SBO
}

__device__ __forceinline__ unsigned long long smem_desc(const void* tile) {
  return desc_encode(static_cast<unsigned>(__cvta_generic_to_shared(tile)));
}

// Byte offset of B[k][n] in the k16 x n8 tile (K-major, no swizzle, see smem_desc).
__host__ __device__ constexpr unsigned tile_offset(int k, int n) {
  return (k / 8) * kCoreBytes + n * 16 + (k % 8) * 2;
}

// An A fragment register for the next group: v ^ (prev & z), which is v, since z is 0 at run time
// (see "A registers" at spmv_wgmma). Reading prev here, after the wgmma.wait_group, keeps the
// previous group's fragment registers allocated, and untouched, until that group has retired.
__device__ __forceinline__ unsigned renew_fragment(unsigned v, unsigned prev, unsigned z) {
  unsigned out;
  asm volatile("lop3.b32 %0, %1, %2, %3, 0x78;\n" : "=r"(out) : "r"(v), "r"(prev), "r"(z));
  return out;
}

// Keeps the compiler from moving accumulator reads or writes across the asynchronous wgmma
// window (the asm statements that issue and wait do not name the accumulators).
__device__ __forceinline__ void fence_operand(float& r) { asm volatile("" : "+f"(r)::"memory"); }

__device__ __forceinline__ void wgmma_fence() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void wgmma_commit() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

template <int N>
__device__ __forceinline__ void wgmma_wait() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}

// Stores through the generic proxy become visible to the async proxy (wgmma operand reads).
__device__ __forceinline__ void fence_proxy_async_smem() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

// D (64x8, f32) += A (64x16 f16, registers) * B (16x8 f16, shared memory via desc).
// scale-d = 1 (accumulate), imm-scale-a = imm-scale-b = 1, imm-trans-b = 0 (B K-major).
__device__ __forceinline__ void wgmma_m64n8k16(float& d0, float& d1, float& d2, float& d3,
                                               const unsigned (&a)[4], unsigned long long desc) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %9, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "%8, p, 1, 1, 0;\n"
      "}\n"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1));
#else
  (void)d0, (void)d1, (void)d2, (void)d3, (void)a, (void)desc;
#endif
}

constexpr int kWgChunks = 8;  // chunks per warpgroup: 64 rows of A, 8 columns of B
constexpr int kStages = 2;    // B tile buffers (double buffering), see spmv_wgmma
static_assert(kStages == 2, "spmv_wgmma flips between two tiles (stage ^= 1)");

// Kernel B: one warpgroup (the whole 128-thread CTA) per 8 chunks, one wgmma.m64n8k16 per k16
// step (blocks 2j and 2j + 1 of every chunk), kSteps steps per commit group (the host picks
// kSteps so that few wgmma run past the last step).
//
// A operand (registers; wgmma .m64nNk16 A fragment, the same per-warp layout as mma.m16n8k16):
// warp w holds rows 16w..16w+15 of A; lane l (g = l / 4, t = l % 4) holds
//   a[0] = A[16w + g][2t, 2t+1]      a[1] = A[16w + 8 + g][2t, 2t+1]
//   a[2] = A[16w + g][2t+8, 2t+9]    a[3] = A[16w + 8 + g][2t+8, 2t+9]
// Rows 16w..16w+7 are chunk 2w, rows 16w+8..16w+15 chunk 2w + 1 (of the warpgroup's 8), and
// columns 0-7 / 8-15 are the chunk's blocks 2j / 2j + 1, so each register is block_pair() of one
// block: exactly the lane's slots 2l, 2l + 1 of kernel A.
//
// B operand (shared memory): B[k][n] = x at column k of chunk n's k16 step, written by thread
// 16n + k, so a warp gathers x for its own two chunks.
//
// D (wgmma .m64nNk16 f32 accumulator, N = 8): lane l of warp w holds d0, d1 = D[16w + g][2t,
// 2t+1] and d2, d3 = D[16w + 8 + g][2t, 2t+1]. Only D[8n + r][n] is wanted (row r of chunk n
// against chunk n's own x): for chunk 2w that is column 2w = 2t, d0, and for chunk 2w + 1
// column 2w + 1 = 2t + 1, d3, both in the lanes with t = w. The other 7/8 of D is discarded.
//
// Ordering, per commit group i: global loads (A values, x) -> wgmma.wait_group 0 (group i - 1,
// which ran during the loads) -> A fragments renewed (renew_fragment) -> stores to B tile
// i % 2 -> fence.proxy.async -> barrier -> wgmma.fence -> wgmma (reads the A registers and the
// tile asynchronously) -> commit. Tile i % 2 was last read by group i - 2; every thread executed
// group i - 1's wait_group 0 (retiring group i - 2) before barrier i - 1, which precedes any
// store of group i, so that reader has completed in every warp. No C++ code reads the tiles
// (wgmma reads them through the descriptor); the "memory" clobber of the fence.proxy.async asm
// is what keeps the compiler from dropping the stores.
//
// A registers: group i - 1 reads its A fragments asynchronously until the wait, and the loads of
// group i run in that window, so no register they write may be one of group i - 1's fragment
// registers (writing an in-flight wgmma's A registers is undefined). Which registers those are is
// ptxas's choice, and a copy made after the wait is not enough: ptxas (CUDA 13.0) counts a
// wgmma's A registers as free once the instruction has issued, folded such a copy (mov) into the
// loads, and the next group's loads and address arithmetic then wrote the A registers of the
// group still running. The first GPU run showed it in R=2^18 C=256 d=1.00, the only
// configuration with more than two groups per warpgroup under full load: a few rows off by
// hundreds (index values read as fp16 A entries). So the fragments are carried across
// iterations and renewed after the wait as v ^ (a & z), with z = d0 & hold_mask = 0 at run time
// (hold_mask = chunks >> 31, which neither compiler can fold): the old fragment is read after the
// wait, so its registers stay allocated through the loads, and z reads the accumulator, which
// ptxas must place after the wait, so the renewal cannot move above it. After the loop the last
// group's fragments are held the same way until its wait. sasscheck.py checks the SASS for any
// access to an in-flight wgmma's A or D registers (run.sh runs it where cuobjdump is available).
template <int kSteps>
__global__ void __launch_bounds__(128)
    spmv_wgmma(DevHot h, const unsigned short* __restrict__ x, float* __restrict__ y) {
  // One k16 x n8 fp16 tile is 256 bytes, two core matrices.
  __shared__ alignas(128) unsigned short tiles[kStages][kSteps][128];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int first = blockIdx.x * kWgChunks;

  // Block range of a chunk; a chunk past the end (last warpgroup) is empty.
  auto range = [&](int c, int& b, int& e) {
    b = e = 0;
    if (c < h.chunks) b = __ldg(&h.chunk_ptr[c]), e = __ldg(&h.chunk_ptr[c + 1]);
  };
  // k16 steps of the warpgroup: the longest of its chunks (a short one reads as zeros).
  int steps = 0;
#pragma unroll
  for (int i = 0; i < kWgChunks; ++i) {
    int b, e;
    range(first + i, b, e);
    steps = max(steps, (e - b + 1) / 2);
  }
  int a0_beg, a0_end, a1_beg, a1_end, x_beg, x_end;
  range(first + 2 * warp, a0_beg, a0_end);
  range(first + 2 * warp + 1, a1_beg, a1_end);
  const int xn = tid >> 4, xk = tid & 15;
  range(first + xn, x_beg, x_end);
  const unsigned x_at = tile_offset(xk, xn) / 2;  // in fp16 elements

  // 0 at run time (chunks >= 0), but not a constant to nvcc or ptxas; see "A registers" above.
  const unsigned hold_mask = static_cast<unsigned>(h.chunks) >> 31;
  float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
  unsigned a[kSteps][4] = {};  // the A fragments of the group in flight (none before the first)
  int stage = 0;
  for (int base = 0; base < steps; base += kSteps) {
    // Global loads first: they overlap the previous group's wgmma.
    unsigned v[kSteps][4];
    unsigned short xb[kSteps];
    bool unused0, unused1;
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      const int j = base + s;  // steps past `steps` are past every chunk's end: zeros
      v[s][0] = block_pair(h, a0_beg + 2 * j, a0_end, lane, unused0, unused1);
      v[s][1] = block_pair(h, a1_beg + 2 * j, a1_end, lane, unused0, unused1);
      v[s][2] = block_pair(h, a0_beg + 2 * j + 1, a0_end, lane, unused0, unused1);
      v[s][3] = block_pair(h, a1_beg + 2 * j + 1, a1_end, lane, unused0, unused1);
      const int blk = x_beg + 2 * j + (xk >> 3);
      xb[s] = blk < x_end ? ld_u16(&x[__ldg(&h.tc_col[blk * kBlockCols + (xk & 7)])])
                          : static_cast<unsigned short>(0);
    }
    wgmma_wait<0>();
    // The A fragments of this group, written only now, with no wgmma in flight, over those of the
    // group just retired (which the loads above therefore could not overwrite).
    fence_operand(d0), fence_operand(d1), fence_operand(d2), fence_operand(d3);
    const unsigned z = __float_as_uint(d0) & hold_mask;  // 0
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
#pragma unroll
      for (int r = 0; r < 4; ++r) a[s][r] = renew_fragment(v[s][r], a[s][r], z);
    }
#pragma unroll
    for (int s = 0; s < kSteps; ++s) tiles[stage][s][x_at] = xb[s];
    fence_proxy_async_smem();
    __syncthreads();
    fence_operand(d0), fence_operand(d1), fence_operand(d2), fence_operand(d3);
    wgmma_fence();
    // No condition around a wgmma: a branch between them makes ptxas inject extra
    // warpgroup.arrive (C7519). A step past `steps` multiplies zeros (A = 0, its tile is zeros).
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      wgmma_m64n8k16(d0, d1, d2, d3, a[s], smem_desc(tiles[stage][s]));
    }
    wgmma_commit();
    stage ^= 1;
  }
  wgmma_wait<0>();
  fence_operand(d0), fence_operand(d1), fence_operand(d2), fence_operand(d3);
  {
    // The last group's fragments, held until its wait as well: held is 0, d0 stays bit for bit.
    const unsigned z = __float_as_uint(d0) & hold_mask;
    unsigned held = 0;
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
#pragma unroll
      for (int r = 0; r < 4; ++r) held = renew_fragment(held, a[s][r], z);
    }
    d0 = __uint_as_float(__float_as_uint(d0) | held);
  }

  const int g = lane >> 2, t = lane & 3;
  if (t == warp) {
    const int c0 = first + 2 * warp, c1 = c0 + 1;
    if (c0 < h.chunks) y[c0 * kChunkRows + g] = d0;
    if (c1 < h.chunks) y[c1 * kChunkRows + g] = d3;
  }
  (void)d1, (void)d2;
}

// Reports whether the sm_90a code path (wgmma) was compiled into the image that runs.
__global__ void has_wgmma(int* out) { *out = kHasWgmma ? 1 : 0; }

// ---------------------------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------------------------

struct Config {
  std::string name;
  int rows;        // multiple of 8
  int cmin, cmax;  // distinct columns per chunk, multiples of 8, drawn uniformly per chunk
  double density;  // probability that a slot (row, column of the chunk) holds an entry
  int ncols;       // columns of x; each chunk draws its columns from [0, ncols)
};

struct HostHot {
  int rows = 0, chunks = 0, ncols = 0;
  std::vector<int> chunk_ptr, tc_col, tc_ptr;
  std::vector<unsigned long long> tc_bit;
  std::vector<unsigned short> val, x;
  long long distinct_cols = 0;  // columns of x read at least once
};

// splitmix64: deterministic and the same on every platform.
struct Rng {
  unsigned long long s;
  unsigned long long next() {
    unsigned long long z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return (next() >> 11) * (1.0 / 9007199254740992.0); }
  int below(int n) { return static_cast<int>(next() % static_cast<unsigned long long>(n)); }
};

unsigned short to_half_bits(float f) { return static_cast<__half_raw>(__float2half_rn(f)).x; }

double from_half_bits(unsigned short bits) {
  __half_raw raw;
  raw.x = bits;
  return static_cast<double>(__half2float(__half(raw)));
}

// The hot region after TCU-aware compression: every column of a chunk has at least one entry in
// the chunk (an empty one would have been compressed away), so a column left empty by the
// density draw gets one entry in a random row.
HostHot make_hot(const Config& c, unsigned long long seed) {
  HostHot h;
  h.rows = c.rows;
  h.chunks = c.rows / kChunkRows;
  h.ncols = c.ncols;
  Rng rng{seed};
  std::vector<char> used(c.ncols, 0);
  std::vector<int> cols;
  h.chunk_ptr.push_back(0);
  h.tc_ptr.push_back(0);
  for (int ch = 0; ch < h.chunks; ++ch) {
    const int ncol = c.cmin + kBlockCols * rng.below((c.cmax - c.cmin) / kBlockCols + 1);
    // ncol distinct sorted columns: draw, sort, deduplicate, top up.
    cols.clear();
    while (static_cast<int>(cols.size()) < ncol) {
      while (static_cast<int>(cols.size()) < ncol) cols.push_back(rng.below(c.ncols));
      std::sort(cols.begin(), cols.end());
      cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    }
    for (int col : cols) used[col] = 1;
    std::vector<unsigned> col_rows(ncol, 0);  // bit r: row r has an entry in this column
    for (int k = 0; k < ncol; ++k) {
      for (int r = 0; r < kChunkRows; ++r) {
        if (rng.uniform() < c.density) col_rows[k] |= 1u << r;
      }
      if (col_rows[k] == 0) col_rows[k] = 1u << rng.below(kChunkRows);
    }
    for (int b = 0; b < ncol / kBlockCols; ++b) {
      unsigned long long bits = 0;
      for (int r = 0; r < kChunkRows; ++r) {
        for (int k = 0; k < kBlockCols; ++k) {
          if (!((col_rows[b * kBlockCols + k] >> r) & 1u)) continue;
          bits |= 1ull << (r * kBlockCols + k);
          h.val.push_back(to_half_bits(static_cast<float>(2.0 * rng.uniform() - 1.0)));
        }
      }
      h.tc_bit.push_back(bits);
      for (int k = 0; k < kBlockCols; ++k) h.tc_col.push_back(cols[b * kBlockCols + k]);
      h.tc_ptr.push_back(static_cast<int>(h.val.size()));
    }
    h.chunk_ptr.push_back(static_cast<int>(h.tc_bit.size()));
  }
  h.x.resize(c.ncols);
  for (auto& v : h.x) v = to_half_bits(static_cast<float>(2.0 * rng.uniform() - 1.0));
  for (char u : used) h.distinct_cols += u;
  return h;
}

// fp64 reference from the fp16 values: y and the row's absolute sum Σ|a||x|.
void reference(const HostHot& h, std::vector<double>& y, std::vector<double>& abs_sum) {
  y.assign(h.rows, 0.0);
  abs_sum.assign(h.rows, 0.0);
  for (int ch = 0; ch < h.chunks; ++ch) {
    for (int b = h.chunk_ptr[ch]; b < h.chunk_ptr[ch + 1]; ++b) {
      int at = h.tc_ptr[b];
      for (int bit = 0; bit < 64; ++bit) {
        if (!((h.tc_bit[b] >> bit) & 1ull)) continue;
        const int row = ch * kChunkRows + bit / kBlockCols;
        const double p = from_half_bits(h.val[at++]) *
                         from_half_bits(h.x[h.tc_col[b * kBlockCols + bit % kBlockCols]]);
        y[row] += p;
        abs_sum[row] += std::fabs(p);
      }
    }
  }
}

template <class T>
T* upload(const std::vector<T>& v) {
  T* d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, std::max<size_t>(v.size(), 1) * sizeof(T)));
  if (!v.empty()) CUDA_CHECK(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

struct Verdict {
  bool pass = false;
  double max_err = 0;
  long long bad_rows = 0;
};

// Per row: |y - ref| relative to Σ|a||x| (≥ |ref|; the scale of fp32 rounding, so cancellation
// in a row's sum does not fail a correct result). A wrong fragment mapping gives errors of the
// order of Σ|a||x| / sqrt(entries), far above the tolerance; a correct one about 1e-6.
Verdict verify(const std::vector<float>& y, const std::vector<double>& ref,
               const std::vector<double>& abs_sum, const char* kernel, const std::string& config) {
  Verdict v;
  int shown = 0;
  for (size_t r = 0; r < y.size(); ++r) {
    const double diff = std::fabs(static_cast<double>(y[r]) - ref[r]);
    const double err = abs_sum[r] > 0 ? diff / abs_sum[r] : diff;
    if (!(err <= kTolerance)) {  // NaN (an unwritten row) fails too
      ++v.bad_rows;
      if (shown++ < 4) {
        std::printf("  mismatch %s %s row %zu (chunk %zu row %zu): got %.6g want %.6g\n", kernel,
                    config.c_str(), r, r / kChunkRows, r % kChunkRows, y[r], ref[r]);
      }
    }
    if (!(err <= v.max_err)) v.max_err = err;
  }
  if (v.bad_rows > 0) {
    std::printf("  %s %s: %lld of %zu rows wrong\n", kernel, config.c_str(), v.bad_rows, y.size());
  }
  v.pass = v.bad_rows == 0;
  return v;
}

struct Timing {
  double warm_us = 0, flushed_us = 0;
};

// Warm: back-to-back launches, mean. Flushed: each launch after writing a buffer of twice the L2
// size (evicts the matrix and x from L2), median.
Timing time_kernel(const std::function<void()>& launch, void* flush, size_t flush_bytes) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  Timing t;
  for (int i = 0; i < 3; ++i) launch();
  CUDA_CHECK(cudaEventRecord(start));
  for (int i = 0; i < kWarmRuns; ++i) launch();
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  t.warm_us = 1e3 * ms / kWarmRuns;
  std::vector<float> samples;
  for (int i = 0; i < kFlushRuns; ++i) {
    CUDA_CHECK(cudaMemsetAsync(flush, i & 0xFF, flush_bytes));
    CUDA_CHECK(cudaEventRecord(start));
    launch();
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    samples.push_back(ms);
  }
  std::sort(samples.begin(), samples.end());
  t.flushed_us = 1e3 * samples[samples.size() / 2];
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return t;
}

struct Row {
  std::string config;
  long long rows = 0, nnz = 0, blocks = 0;
  double mbytes = 0;
  int group = 0;  // k16 steps per wgmma commit group
  Timing t[2];
  Verdict v[2];
};

const char* const kKernelName[2] = {"mma.sync.m16n8k8", "wgmma.m64n8k16"};

// k16 steps per wgmma commit group: 4, or fewer when the chunks are short (C = 16: one step).
// WGMMA_GROUP=1|2|4 forces it: more steps per group keep more loads in flight per thread but take
// more registers (48 with 1 step, 56 with 2, 72 with 4), so fewer warpgroups per SM.
int wgmma_group(const HostHot& h) {
  int max_blocks = 0;
  for (int ch = 0; ch < h.chunks; ++ch) {
    max_blocks = std::max(max_blocks, h.chunk_ptr[ch + 1] - h.chunk_ptr[ch]);
  }
  const int steps = (max_blocks + 1) / 2;
  int group = steps >= 4 ? 4 : steps >= 2 ? 2 : 1;
  if (const char* env = std::getenv("WGMMA_GROUP")) {
    const int forced = std::atoi(env);
    if (forced == 1 || forced == 2 || forced == 4) group = forced;
  }
  return group;
}

// ---------------------------------------------------------------------------------------------
// CPU emulation (probe --cpu): both kernels run thread by thread on the host, with the kernels'
// own block_pair(), tile_offset() and desc_encode(), 32-bit indices as in the kernels, and the
// tensor-core instructions emulated from the PTX ISA fragment layouts (not from the kernels'
// comments). It checks the index math and the fragment mappings of any configuration without a
// GPU; it cannot show hazards of the asynchronous wgmma (nothing runs concurrently here).
// Every index a kernel forms is also recomputed in 64 bits and checked against its array.
// ---------------------------------------------------------------------------------------------

float half_to_float(unsigned short bits) { return static_cast<float>(from_half_bits(bits)); }

struct IndexCheck {
  const HostHot* h = nullptr;
  long long max_val = -1, max_block = -1, max_tc_col = -1, max_x = -1, max_y = -1;
  long long bad = 0;
  void at(long long i64, long long i32, size_t size, long long& max_seen) {
    if (i64 != i32 || i64 < 0 || i64 >= static_cast<long long>(size)) ++bad;
    max_seen = std::max(max_seen, i64);
  }
  // The indices block_pair(b) forms: the block, and the values of its set bits.
  void block(int b, int b_end) {
    if (b >= b_end) return;
    at(b, b, h->tc_bit.size(), max_block);
    const long long first = h->tc_ptr[b];
    const long long count = popc64(h->tc_bit[b]);
    if (h->tc_ptr[b + 1] != first + count) ++bad;
    if (count > 0) at(first + count - 1, first + count - 1, h->val.size(), max_val);
  }
};

// mma.sync.m16n8k8 .row.col f32.f16.f16.f32 on the 32 lanes' fragments (PTX ISA, "Matrix
// Fragments for mma.m16n8k8", .f16): a0,a1 (register 0) A[g][2t + i], a2,a3 (register 1)
// A[g + 8][2t + i]; b0,b1 B[2t + i][g]; c0,c1 D[g][2t + i], c2,c3 D[g + 8][2t + i].
void emulate_m16n8k8(float d[32][4], const unsigned a[32][2], const unsigned b[32]) {
  float A[16][8], B[8][8], D[16][8];
  for (int l = 0; l < 32; ++l) {
    const int g = l >> 2, t = l & 3;
    for (int i = 0; i < 2; ++i) {
      A[g][2 * t + i] = half_to_float(static_cast<unsigned short>(a[l][0] >> (16 * i)));
      A[g + 8][2 * t + i] = half_to_float(static_cast<unsigned short>(a[l][1] >> (16 * i)));
      B[2 * t + i][g] = half_to_float(static_cast<unsigned short>(b[l] >> (16 * i)));
      D[g][2 * t + i] = d[l][i];
      D[g + 8][2 * t + i] = d[l][2 + i];
    }
  }
  for (int m = 0; m < 16; ++m) {
    for (int n = 0; n < 8; ++n) {
      for (int k = 0; k < 8; ++k) D[m][n] += A[m][k] * B[k][n];
    }
  }
  for (int l = 0; l < 32; ++l) {
    const int g = l >> 2, t = l & 3;
    for (int i = 0; i < 2; ++i) d[l][i] = D[g][2 * t + i], d[l][2 + i] = D[g + 8][2 * t + i];
  }
}

// wgmma.mma_async.m64n8k16 f32.f16.f16, A from the 128 threads' registers, B through a shared
// memory descriptor (PTX ISA, "Register Fragments and Shared Memory Matrix Layouts"): thread
// 32w + l (g = l / 4, t = l % 4) holds A[16w + g + 8(r % 2)][2t + 8(r / 2) + i] in half i of
// register r, and d0,d1 = D[16w + g][2t + i], d2,d3 = D[16w + 8 + g][2t + i]. B is K-major without
// swizzle: B[k][n] at start + (n / 8) SBO + (n % 8) 16 + (k / 8) LBO + (k % 8) 2 bytes, with start,
// LBO and SBO decoded from the descriptor (bits 0-13, 16-29, 32-45, each >> 4).
void emulate_m64n8k16(float d[128][4], const unsigned a[128][4], unsigned long long desc,
                      const std::vector<unsigned char>& smem, IndexCheck& check) {
  const unsigned start = static_cast<unsigned>(desc & 0x3FFF) << 4;
  const unsigned lbo = static_cast<unsigned>((desc >> 16) & 0x3FFF) << 4;
  const unsigned sbo = static_cast<unsigned>((desc >> 32) & 0x3FFF) << 4;
  float A[64][16], B[16][8], D[64][8];
  for (int tid = 0; tid < 128; ++tid) {
    const int w = tid >> 5, l = tid & 31, g = l >> 2, t = l & 3;
    for (int r = 0; r < 4; ++r) {
      for (int i = 0; i < 2; ++i) {
        A[16 * w + g + 8 * (r & 1)][2 * t + 8 * (r >> 1) + i] =
            half_to_float(static_cast<unsigned short>(a[tid][r] >> (16 * i)));
      }
    }
    for (int i = 0; i < 2; ++i) {
      D[16 * w + g][2 * t + i] = d[tid][i];
      D[16 * w + 8 + g][2 * t + i] = d[tid][2 + i];
    }
  }
  for (int k = 0; k < 16; ++k) {
    for (int n = 0; n < 8; ++n) {
      const unsigned byte = start + (n / 8) * sbo + (n % 8) * 16 + (k / 8) * lbo + (k % 8) * 2;
      if (byte + 2 > smem.size()) {
        ++check.bad;
        B[k][n] = NAN;
        continue;
      }
      B[k][n] = half_to_float(static_cast<unsigned short>(smem[byte] | (smem[byte + 1] << 8)));
    }
  }
  for (int m = 0; m < 64; ++m) {
    for (int n = 0; n < 8; ++n) {
      for (int k = 0; k < 16; ++k) D[m][n] += A[m][k] * B[k][n];
    }
  }
  for (int tid = 0; tid < 128; ++tid) {
    const int w = tid >> 5, l = tid & 31, g = l >> 2, t = l & 3;
    for (int i = 0; i < 2; ++i) {
      d[tid][i] = D[16 * w + g][2 * t + i];
      d[tid][2 + i] = D[16 * w + 8 + g][2 * t + i];
    }
  }
}

DevHot host_view(const HostHot& hh) {
  DevHot h;
  h.chunks = hh.chunks;
  h.chunk_ptr = hh.chunk_ptr.data();
  h.tc_bit = hh.tc_bit.data();
  h.tc_col = hh.tc_col.data();
  h.tc_ptr = hh.tc_ptr.data();
  h.val = hh.val.data();
  return h;
}

// spmv_mma, warp by warp (one chunk each).
void emulate_mma(const HostHot& hh, std::vector<float>& y, IndexCheck& check) {
  const DevHot h = host_view(hh);
  const unsigned short* x = hh.x.data();
  for (int chunk = 0; chunk < h.chunks; ++chunk) {
    const int b_beg = ld_ro(&h.chunk_ptr[chunk]), b_end = ld_ro(&h.chunk_ptr[chunk + 1]);
    float d[32][4] = {};
    for (int b = b_beg; b < b_end; ++b) {
      unsigned a[32][2], bv[32];
      check.block(b, b_end);
      for (int lane = 0; lane < 32; ++lane) {
        const int t = lane & 3;
        bool set0, set1;
        bv[lane] = block_pair(h, b, b_end, lane, set0, set1);
        const int ci = b * kBlockCols + 2 * t;
        check.at(static_cast<long long>(b) * kBlockCols + 2 * t + 1, ci + 1, hh.tc_col.size(),
                 check.max_tc_col);
        const int col_x = h.tc_col[ci], col_y = h.tc_col[ci + 1];
        if (set0) check.at(col_x, col_x, hh.x.size(), check.max_x);
        if (set1) check.at(col_y, col_y, hh.x.size(), check.max_x);
        const unsigned x0 = set0 ? ld_u16(&x[col_x]) : 0u;
        const unsigned x1 = set1 ? ld_u16(&x[col_y]) : 0u;
        a[lane][0] = x0 | (x1 << 16);
        a[lane][1] = 0u;
      }
      emulate_m16n8k8(d, a, bv);
    }
    for (int lane = 0; lane < 32; ++lane) {
      const int g = lane >> 2, t = lane & 3;
      if (t == (g >> 1)) {
        const int yi = chunk * kChunkRows + g;
        check.at(static_cast<long long>(chunk) * kChunkRows + g, yi, y.size(), check.max_y);
        y[yi] = (g & 1) ? d[lane][1] : d[lane][0];
      }
    }
  }
}

// spmv_wgmma<kSteps>, warpgroup by warpgroup, the 128 threads in turn at each step of the kernel.
template <int kSteps>
void emulate_wgmma(const HostHot& hh, std::vector<float>& y, IndexCheck& check) {
  const DevHot h = host_view(hh);
  const unsigned short* x = hh.x.data();
  std::vector<unsigned char> smem(sizeof(unsigned short) * kStages * kSteps * 128);
  const unsigned tile_bytes = sizeof(unsigned short) * 128;
  const int grid = (h.chunks + kWgChunks - 1) / kWgChunks;
  for (int cta = 0; cta < grid; ++cta) {
    const int first = cta * kWgChunks;
    auto range = [&](int c, int& b, int& e) {
      b = e = 0;
      if (c < h.chunks) b = ld_ro(&h.chunk_ptr[c]), e = ld_ro(&h.chunk_ptr[c + 1]);
    };
    int steps = 0;
    for (int i = 0; i < kWgChunks; ++i) {
      int b, e;
      range(first + i, b, e);
      steps = std::max(steps, (e - b + 1) / 2);
    }
    int a0_beg[128], a0_end[128], a1_beg[128], a1_end[128], x_beg[128], x_end[128];
    unsigned x_at[128];
    for (int tid = 0; tid < 128; ++tid) {
      const int warp = tid >> 5, xn = tid >> 4, xk = tid & 15;
      range(first + 2 * warp, a0_beg[tid], a0_end[tid]);
      range(first + 2 * warp + 1, a1_beg[tid], a1_end[tid]);
      range(first + xn, x_beg[tid], x_end[tid]);
      x_at[tid] = tile_offset(xk, xn) / 2;
    }
    float d[128][4] = {};
    int stage = 0;
    for (int base = 0; base < steps; base += kSteps) {
      unsigned v[kSteps][128][4];
      unsigned short xb[kSteps][128];
      for (int tid = 0; tid < 128; ++tid) {
        const int lane = tid & 31, xk = tid & 15;
        bool unused0, unused1;
        for (int s = 0; s < kSteps; ++s) {
          const int j = base + s;
          const int bs[4] = {a0_beg[tid] + 2 * j, a1_beg[tid] + 2 * j, a0_beg[tid] + 2 * j + 1,
                             a1_beg[tid] + 2 * j + 1};
          const int es[4] = {a0_end[tid], a1_end[tid], a0_end[tid], a1_end[tid]};
          for (int r = 0; r < 4; ++r) {
            check.block(bs[r], es[r]);
            v[s][tid][r] = block_pair(h, bs[r], es[r], lane, unused0, unused1);
          }
          const int blk = x_beg[tid] + 2 * j + (xk >> 3);
          xb[s][tid] = 0;
          if (blk < x_end[tid]) {
            const int ci = blk * kBlockCols + (xk & 7);
            check.at(static_cast<long long>(blk) * kBlockCols + (xk & 7), ci, hh.tc_col.size(),
                     check.max_tc_col);
            const int col = ld_ro(&h.tc_col[ci]);
            check.at(col, col, hh.x.size(), check.max_x);
            xb[s][tid] = ld_u16(&x[col]);
          }
        }
      }
      // wgmma.wait_group 0: nothing runs concurrently here. The renewed fragments equal v.
      for (int s = 0; s < kSteps; ++s) {
        for (int tid = 0; tid < 128; ++tid) {
          const unsigned byte = ((stage * kSteps + s) * 128 + x_at[tid]) * 2;
          smem[byte] = static_cast<unsigned char>(xb[s][tid]);
          smem[byte + 1] = static_cast<unsigned char>(xb[s][tid] >> 8);
        }
      }
      for (int s = 0; s < kSteps; ++s) {
        emulate_m64n8k16(d, v[s], desc_encode((stage * kSteps + s) * tile_bytes), smem, check);
      }
      stage ^= 1;
    }
    for (int tid = 0; tid < 128; ++tid) {
      const int warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
      if (t != warp) continue;
      const int c0 = first + 2 * warp, c1 = c0 + 1;
      if (c0 < h.chunks) {
        check.at(static_cast<long long>(c0) * kChunkRows + g, c0 * kChunkRows + g, y.size(),
                 check.max_y);
        y[c0 * kChunkRows + g] = d[tid][0];
      }
      if (c1 < h.chunks) {
        check.at(static_cast<long long>(c1) * kChunkRows + g, c1 * kChunkRows + g, y.size(),
                 check.max_y);
        y[c1 * kChunkRows + g] = d[tid][3];
      }
    }
  }
}

// Both kernels emulated on one configuration (the wgmma one with every group size); true if all
// pass and every index is in range.
bool emulate_config(const Config& c) {
  const HostHot h = make_hot(c, 0x5eed0000ull + static_cast<unsigned long long>(c.rows));
  std::vector<double> ref, abs_sum;
  reference(h, ref, abs_sum);
  bool ok = true;
  const int chosen = wgmma_group(h);
  for (int k = 0; k < 4; ++k) {
    const int group = k == 0 ? 0 : 1 << (k - 1);
    IndexCheck check;
    check.h = &h;
    std::vector<float> y(h.rows, NAN);
    if (group == 0) {
      emulate_mma(h, y, check);
    } else if (group == 1) {
      emulate_wgmma<1>(h, y, check);
    } else if (group == 2) {
      emulate_wgmma<2>(h, y, check);
    } else {
      emulate_wgmma<4>(h, y, check);
    }
    const std::string kernel =
        group == 0 ? kKernelName[0] : std::string(kKernelName[1]) + " x" + std::to_string(group);
    const Verdict v = verify(y, ref, abs_sum, kernel.c_str(), c.name);
    const bool pass = v.pass && check.bad == 0;
    ok = ok && pass;
    std::printf(
        "%-26s %-19s cpu %s max_err %.2e  indices %s (max value %lld of %zu, block %lld of %zu, "
        "tc_col %lld of %zu, x %lld of %zu, y %lld of %zu; int32 max %d)%s\n",
        c.name.c_str(), kernel.c_str(), pass ? "PASS" : "FAIL", v.max_err,
        check.bad == 0 ? "ok" : "OUT OF RANGE", check.max_val, h.val.size(), check.max_block,
        h.tc_bit.size(), check.max_tc_col, h.tc_col.size(), check.max_x, h.x.size(), check.max_y,
        static_cast<size_t>(h.rows), INT32_MAX,
        group == chosen ? " (the group the GPU run uses)" : "");
    std::fflush(stdout);
  }
  return ok;
}

Row run_config(const Config& c, void* flush, size_t flush_bytes) {
  const HostHot h = make_hot(c, 0x5eed0000ull + static_cast<unsigned long long>(c.rows));
  std::vector<double> ref, abs_sum;
  reference(h, ref, abs_sum);

  DevHot d;
  d.chunks = h.chunks;
  d.chunk_ptr = upload(h.chunk_ptr);
  d.tc_bit = upload(h.tc_bit);
  d.tc_col = upload(h.tc_col);
  d.tc_ptr = upload(h.tc_ptr);
  d.val = upload(h.val);
  const unsigned short* x = upload(h.x);
  float* y = nullptr;
  CUDA_CHECK(cudaMalloc(&y, h.rows * sizeof(float)));

  Row row;
  row.config = c.name;
  row.rows = h.rows;
  row.nnz = static_cast<long long>(h.val.size());
  row.blocks = static_cast<long long>(h.tc_bit.size());
  // Compulsory traffic: values, bitmaps, block columns, block and chunk pointers, the columns of
  // x that are read, y.
  const double bytes = 2.0 * row.nnz + 8.0 * row.blocks + 4.0 * kBlockCols * row.blocks +
                       4.0 * (row.blocks + 1) + 4.0 * (h.chunks + 1) + 2.0 * h.distinct_cols +
                       4.0 * h.rows;
  row.mbytes = bytes / 1e6;

  constexpr int kMmaWarps = 8;
  const int mma_grid = (h.chunks + kMmaWarps - 1) / kMmaWarps;
  const int wg_grid = (h.chunks + kWgChunks - 1) / kWgChunks;
  const int group = wgmma_group(h);
  row.group = group;
  auto launch_mma = [&] { spmv_mma<<<mma_grid, 32 * kMmaWarps>>>(d, x, y); };
  auto launch_wgmma = [&] {
    if (group == 4) {
      spmv_wgmma<4><<<wg_grid, 128>>>(d, x, y);
    } else if (group == 2) {
      spmv_wgmma<2><<<wg_grid, 128>>>(d, x, y);
    } else {
      spmv_wgmma<1><<<wg_grid, 128>>>(d, x, y);
    }
  };

  const std::function<void()> launch[2] = {launch_mma, launch_wgmma};
  std::vector<float> out(h.rows);
  for (int k = 0; k < 2; ++k) {
    // 0xFF bytes are NaN floats: a row the kernel does not write fails verification.
    CUDA_CHECK(cudaMemset(y, 0xFF, h.rows * sizeof(float)));
    launch[k]();
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(out.data(), y, h.rows * sizeof(float), cudaMemcpyDeviceToHost));
    row.v[k] = verify(out, ref, abs_sum, kKernelName[k], c.name);
    row.t[k] = time_kernel(launch[k], flush, flush_bytes);
    const std::string kernel =
        k == 0 ? kKernelName[0] : std::string(kKernelName[1]) + " x" + std::to_string(group);
    std::printf(
        "%-26s %-19s %s max_err %.2e  warm %9.2f us %7.1f GB/s  flushed %9.2f us %7.1f GB/s"
        "  (rows %lld, nnz %lld, %.1f MB)\n",
        c.name.c_str(), kernel.c_str(), row.v[k].pass ? "PASS" : "FAIL", row.v[k].max_err,
        row.t[k].warm_us, bytes / row.t[k].warm_us / 1e3, row.t[k].flushed_us,
        bytes / row.t[k].flushed_us / 1e3, row.rows, row.nnz, row.mbytes);
    std::fflush(stdout);
  }

  CUDA_CHECK(cudaFree(const_cast<int*>(d.chunk_ptr)));
  CUDA_CHECK(cudaFree(const_cast<unsigned long long*>(d.tc_bit)));
  CUDA_CHECK(cudaFree(const_cast<int*>(d.tc_col)));
  CUDA_CHECK(cudaFree(const_cast<int*>(d.tc_ptr)));
  CUDA_CHECK(cudaFree(const_cast<unsigned short*>(d.val)));
  CUDA_CHECK(cudaFree(const_cast<unsigned short*>(x)));
  CUDA_CHECK(cudaFree(y));
  return row;
}

std::string config_name(const Config& c) {
  char buf[96];
  const int lg = static_cast<int>(std::lround(std::log2(static_cast<double>(c.rows))));
  const std::string rows = (1 << lg) == c.rows ? "2^" + std::to_string(lg) : std::to_string(c.rows);
  const std::string cols = c.cmin == c.cmax ? std::to_string(c.cmin)
                                            : std::to_string(c.cmin) + "-" + std::to_string(c.cmax);
  std::snprintf(buf, sizeof buf, "R=%s C=%s d=%.2f", rows.c_str(), cols.c_str(), c.density);
  return buf;
}

bool valid(const Config& c) {
  return c.rows > 0 && c.rows % kChunkRows == 0 && c.cmin >= kBlockCols && c.cmin <= c.cmax &&
         c.cmin % kBlockCols == 0 && c.cmax % kBlockCols == 0 && c.cmax <= c.ncols &&
         c.density > 0 && c.density <= 1 && c.ncols > 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool cpu = argc > 1 && std::string(argv[1]) == "--cpu";
  char** const args = argv + (cpu ? 2 : 1);
  const int nargs = argc - (cpu ? 2 : 1);
  std::vector<Config> configs;
  if (nargs == 5) {
    Config c{"",
             std::atoi(args[0]),
             std::atoi(args[1]),
             std::atoi(args[2]),
             std::atof(args[3]),
             std::atoi(args[4])};
    configs.push_back(c);
  } else if (nargs == 0) {
    // The first one checks the edges (chunks of different lengths, odd block counts, a last
    // warpgroup with fewer than 8 chunks, a partial commit group); the others are the timed
    // shapes: few / many columns per chunk, sparse / full blocks, L2-resident to 4x L2.
    configs = {
        {"", 4120, 8, 72, 0.5, 1 << 12},       {"", 1 << 16, 64, 64, 0.5, 1 << 14},
        {"", 1 << 18, 32, 32, 0.25, 1 << 16},  {"", 1 << 20, 16, 16, 1.0, 1 << 16},
        {"", 1 << 18, 256, 256, 1.0, 1 << 18},
    };
  } else {
    std::fprintf(stderr, "usage: %s [--cpu] [ROWS CMIN CMAX DENSITY NCOLS]\n", argv[0]);
    return 2;
  }
  for (auto& c : configs) {
    if (!valid(c)) {
      std::fprintf(stderr,
                   "bad configuration: ROWS multiple of 8, CMIN <= CMAX multiples of 8 and <= "
                   "NCOLS, 0 < DENSITY <= 1\n");
      return 2;
    }
    c.name = config_name(c);
  }
  if (cpu) {
    bool ok = true;
    for (const auto& c : configs) ok = emulate_config(c) && ok;
    return ok ? 0 : 1;
  }

  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  std::printf("device: %s (sm_%d%d, %d SMs, L2 %.1f MB)\n", prop.name, prop.major, prop.minor,
              prop.multiProcessorCount, prop.l2CacheSize / 1e6);
  if (prop.major != 9 || prop.minor != 0) {
    std::fprintf(stderr, "wgmma needs an sm_90 device (H100 / H200)\n");
    return 2;
  }
  int* flag = nullptr;
  int has = 0;
  CUDA_CHECK(cudaMalloc(&flag, sizeof(int)));
  has_wgmma<<<1, 1>>>(flag);
  CUDA_CHECK(cudaMemcpy(&has, flag, sizeof(int), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(flag));
  if (!has) {
    std::fprintf(stderr, "the image that runs was not compiled for sm_90a (no wgmma)\n");
    return 2;
  }

  const size_t flush_bytes = 2 * static_cast<size_t>(prop.l2CacheSize);
  void* flush = nullptr;
  CUDA_CHECK(cudaMalloc(&flush, flush_bytes));

  std::vector<Row> rows;
  for (const auto& c : configs) rows.push_back(run_config(c, flush, flush_bytes));
  CUDA_CHECK(cudaFree(flush));

  bool all_pass = true;
  std::printf("\n%-26s %10s %10s %8s %5s | %10s %10s %7s | %10s %10s %7s | %s\n", "config", "rows",
              "nnz", "MB", "group", "mma warm", "wgmma warm", "speedup", "mma flush", "wgmma flush",
              "speedup", "verify");
  for (const auto& r : rows) {
    const bool pass = r.v[0].pass && r.v[1].pass;
    all_pass = all_pass && pass;
    std::printf(
        "%-26s %10lld %10lld %8.1f %5d | %8.2fus %8.2fus %6.2fx | %8.2fus %8.2fus %6.2fx | %s\n",
        r.config.c_str(), r.rows, r.nnz, r.mbytes, r.group, r.t[0].warm_us, r.t[1].warm_us,
        r.t[0].warm_us / r.t[1].warm_us, r.t[0].flushed_us, r.t[1].flushed_us,
        r.t[0].flushed_us / r.t[1].flushed_us,
        pass ? "PASS" : (r.v[0].pass ? "FAIL (wgmma)" : "FAIL"));
  }
  std::printf(
      "speedup = mma.sync time / wgmma time (> 1: wgmma faster); group = k16 steps per wgmma "
      "commit group\n");
  return all_pass ? 0 : 1;
}
