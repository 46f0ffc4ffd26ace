//@ decl
__shared__ st_acc_t s_warp_sum[$WARPS];
st_acc_t b_acc = 0;
//@ bmtb_begin
b_acc = 0;
//@ accept
// SHMEM_TOTAL_RED: the thread block holds one row; every thread keeps a partial sum.
b_acc += IN_V;
//@ bmtb_end
for (int off = 16; off > 0; off >>= 1) b_acc += __shfl_xor_sync(ST_FULL_MASK, b_acc, off);
if (lane == 0) s_warp_sum[warp] = b_acc;
__syncthreads();
if (threadIdx.x == 0) {
  st_acc_t s = 0;
  for (int w = 0; w < $WARPS; ++w) s += s_warp_sum[w];
  $EMIT(A_bmtb_row(bmtb), s)
}
__syncthreads();
