//@ decl
__shared__ st_acc_t s_rows[$SHMEM_ROWS];
//@ bmtb_begin
const st_idx_t o_row0 = A_bmtb_row(bmtb);
const st_idx_t o_rows = A_bmtb_rows(bmtb);
for (st_idx_t i = threadIdx.x; i < o_rows; i += $THREADS) s_rows[i] = 0;
__syncthreads();
//@ accept
// SHMEM_OFFSET_RED: accumulate at the row's offset from the BMTB's first row.
if (IN_ROW >= 0) atomicAdd(&s_rows[IN_ROW - o_row0], IN_V);
//@ bmtb_end
__syncthreads();
for (st_idx_t i = threadIdx.x; i < o_rows; i += $THREADS) {
  $EMIT(o_row0 + i, s_rows[i])
}
__syncthreads();
