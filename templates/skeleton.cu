//@ kernel
extern "C" __global__ void __launch_bounds__($THREADS)
$KERNEL(
    const st_val_t* __restrict__ x, st_acc_t* __restrict__ y, const st_acc_t alpha,
    const st_acc_t beta$PARAMS) {
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  $DECL
  // BMTB: one thread block's share of the part.
  $BMTB_LOOP {
    const long long w_begin = A_bmtb_first_bmw(bmtb);
    const long long w_end = A_bmtb_first_bmw(bmtb + 1);
    $BMTB_BEGIN
    // BMW: each warp takes one warp block per round.
    $BMW_LOOP {
      const long long bmw = w0 + warp;
      const bool w_active = bmw < w_end;
      const long long t_begin = w_active ? A_bmw_first_bmt(bmw) : 0;
      const long long t_end = w_active ? A_bmw_first_bmt(bmw + 1) : 0;
      $BMW_BEGIN
      // BMT: each lane takes one thread block per round; the round is warp-uniform.
      $BMT_LOOP {
        const long long bmt = t0 + lane;
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
//@ bmtb_loop
for (long long bmtb = blockIdx.x; bmtb < $N_BMTB; bmtb += gridDim.x)
//@ bmtb_once
if (const long long bmtb = blockIdx.x; bmtb < $N_BMTB)
//@ bmw_loop
for (long long w0 = w_begin; w0 < w_end; w0 += $WARPS)
//@ bmw_once
if (const long long w0 = w_begin; w0 < w_end)
//@ bmt_loop
for (long long t0 = t_begin; t0 < t_end; t0 += 32)
//@ bmt_once
if (const long long t0 = t_begin; t0 < t_end)
//@ scale_y
// y = beta y before the adding kernels run (beta = 0 stores zeros and never reads y, so a y
// holding NaN is fine): the first step of y = alpha A x + beta y for formats that add into y.
extern "C" __global__ void __launch_bounds__(256)
$KERNEL(st_acc_t* __restrict__ y, const long long n, const st_acc_t beta) {
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < n; i += gridDim.x * 256LL)
    y[i] = beta == (st_acc_t)0 ? (st_acc_t)0 : beta * y[i];
}
