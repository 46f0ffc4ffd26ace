//@ kernel
extern "C" __global__ void __launch_bounds__($THREADS)
$KERNEL(
    $ARGS$PARAMS) {
  $OP_PROLOGUE
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  $DECL
  // BMTB: one thread block's share of the part.
  $BMTB_LOOP {
    const st_idx_t w_begin = A_bmtb_first_bmw(bmtb);
    const st_idx_t w_end = A_bmtb_first_bmw(bmtb + 1);
    $BMTB_BEGIN
    // BMW: each warp takes one warp block per round.
    $BMW_LOOP {
      const st_idx_t bmw = w0 + warp;
      const bool w_active = bmw < w_end;
      const st_idx_t t_begin = w_active ? A_bmw_first_bmt(bmw) : 0;
      const st_idx_t t_end = w_active ? A_bmw_first_bmt(bmw + 1) : 0;
      $BMW_BEGIN
      // BMT: each lane takes one thread block per round; the round is warp-uniform.
      $BMT_LOOP {
        const st_idx_t bmt = t0 + lane;
        const bool t_active = bmt < t_end;
        $THREAD
      }
      $BMW_END
    }
    $BMTB_END
  }
  (void)lane;
  (void)warp;
  (void)beta;
}
//@ args_spmv
const st_val_t* __restrict__ x, st_acc_t* __restrict__ y, const st_acc_t alpha,
    const st_acc_t beta
//@ args_spmm
const st_val_t* __restrict__ B, const long long ldb, st_acc_t* __restrict__ C,
    const long long ldc, const long long n, const st_acc_t alpha, const st_acc_t beta
//@ prologue_spmm
// SpMM: this block's tile of $COL_TILE columns of B and C is grid y; the sparse loops below are
// SpMV's, with a C tile in registers where SpMV keeps one value.
typedef st_tile<$COL_TILE> st_tile_t;
constexpr int st_vec = $COL_VEC;
const long long st_n0 = (long long)blockIdx.y * $COL_TILE;
if (st_n0 >= n) return;  // the whole block: blockIdx.y is uniform
const int st_nt = n - st_n0 < $COL_TILE ? (int)(n - st_n0) : $COL_TILE;
// Vector loads of B need ldb and B aligned to the vector (st_n0 is, as vec divides the tile).
const bool st_vec_ok = st_vec == 1 || (ldb % st_vec == 0 &&
                                       (unsigned long long)B % (st_vec * sizeof(st_val_t)) == 0);
(void)st_vec_ok;
(void)ldc;
//@ prologue_spmm_lanes
// SpMM, lanes over columns: each group of $COL_LANES lanes walks the same thread blocks (entries)
// together, one after another, lane g of a group covering the $COL_TILE columns at g * $COL_TILE
// of this block's $COL_SPAN (grid y); a B row segment is read coalesced by the group and a thread
// block's sum needs no other lane.
typedef st_tile<$COL_TILE> st_tile_t;
constexpr int st_vec = $COL_VEC;
const long long st_nb = (long long)blockIdx.y * $COL_SPAN;
if (st_nb >= n) return;  // the whole block: blockIdx.y is uniform
const int st_g0 = (int)(threadIdx.x & 31) & ~($COL_LANES - 1);  // first lane of the group
const long long st_n0 = st_nb + (long long)(threadIdx.x & ($COL_LANES - 1)) * $COL_TILE;
const int st_nt = n - st_n0 >= $COL_TILE ? $COL_TILE : n > st_n0 ? (int)(n - st_n0) : 0;
// Vector loads of B need ldb and B aligned to the vector (st_n0 is, as vec divides the tile).
const bool st_vec_ok = st_vec == 1 || (ldb % st_vec == 0 &&
                                       (unsigned long long)B % (st_vec * sizeof(st_val_t)) == 0);
(void)st_vec_ok;
(void)ldc;
//@ bmt_lanes
for (int st_i = 0; st_i < $COL_LANES && t0 + st_g0 + st_i < t_end; ++st_i)
//@ bmt_lanes_index
const st_idx_t bmt = t0 + st_g0 + st_i;  // the group's st_i-th thread block of the round
//@ lane_group
const int st_gl = (int)(threadIdx.x & ($COL_LANES - 1));
const unsigned st_gmask =
    $COL_LANES == 32 ? ST_FULL_MASK : ((1u << ($COL_LANES & 31)) - 1u) << st_g0;
// One path for the whole group, so that its shuffles stay together.
const bool st_full = __all_sync(st_gmask, ST_TILE_FULL(t_sum));
//@ thread_range
// A thread block's first row and entry range (entries first, first + stride, ... size of them).
t_row = A_bmt_row(bmt);
const st_idx_t first = A_bmt_first_nz(bmt);
const st_idx_t stride = A_bmt_stride(bmt);
const st_idx_t size = A_bmt_size(bmt);
//@ part_head
static __device__ void
//@ part_args
const st_idx_t st_block, const st_idx_t st_grid,
//@ bmtb_loop_part
for (st_idx_t bmtb = st_block; bmtb < $N_BMTB; bmtb += st_grid)
//@ bmtb_once_part
if (const st_idx_t bmtb = st_block; bmtb < $N_BMTB)
//@ fused
// Horizontal fusion: every part in one launch, part i on its own range of grid x (its thread
// blocks st_b - first_i = 0 .. grid_i - 1). SpMM: all on the same column tile (grid y); a part
// whose tiles are wider than another's returns on the tiles past n.
extern "C" __global__ void __launch_bounds__($THREADS)
$KERNEL(
    $ARGS$PARAMS) {
  const st_idx_t st_b = blockIdx.x;
  $DISPATCH
}
//@ bmtb_loop
for (st_idx_t bmtb = blockIdx.x; bmtb < $N_BMTB; bmtb += gridDim.x)
//@ bmtb_once
if (const st_idx_t bmtb = blockIdx.x; bmtb < $N_BMTB)
//@ bmw_loop
for (st_idx_t w0 = w_begin; w0 < w_end; w0 += $WARPS)
//@ bmw_once
if (const st_idx_t w0 = w_begin; w0 < w_end)
//@ bmt_loop
for (st_idx_t t0 = t_begin; t0 < t_end; t0 += 32)
//@ bmt_once
if (const st_idx_t t0 = t_begin; t0 < t_end)
//@ scale_y
// y = beta y before the adding kernels run (beta = 0 stores zeros and never reads y, so a y
// holding NaN is fine): the first step of y = alpha A x + beta y for formats that add into y.
extern "C" __global__ void __launch_bounds__(256)
$KERNEL(st_acc_t* __restrict__ y, const long long n, const st_acc_t beta) {
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < n; i += gridDim.x * 256LL)
    y[i] = beta == (st_acc_t)0 ? (st_acc_t)0 : beta * y[i];
}
//@ scale_c
// C = beta C before the adding kernels run (beta = 0 stores zeros and never reads C): the first
// step of C = alpha A B + beta C for formats that add into C; C is row-major with stride ldc.
extern "C" __global__ void __launch_bounds__(256)
$KERNEL(st_acc_t* __restrict__ C, const long long rows, const long long n, const long long ldc,
        const st_acc_t beta) {
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < rows * n; i += gridDim.x * 256LL) {
    st_acc_t* const c = &C[(i / n) * ldc + i % n];
    *c = beta == (st_acc_t)0 ? (st_acc_t)0 : beta * *c;
  }
}
//@ scale_c_col
// C = beta C before the adding kernels run (beta = 0 stores zeros and never reads C), C
// column-major with column stride ldc (Format::layout "col").
extern "C" __global__ void __launch_bounds__(256)
$KERNEL(st_acc_t* __restrict__ C, const long long rows, const long long n, const long long ldc,
        const st_acc_t beta) {
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < rows * n; i += gridDim.x * 256LL) {
    st_acc_t* const c = &C[i % rows + (i / rows) * ldc];
    *c = beta == (st_acc_t)0 ? (st_acc_t)0 : beta * *c;
  }
}
