//@ thread
// THREAD_TOTAL_RED: the thread's entries share one row; one sum.
long long t_row = -1;
st_acc_t t_sum = 0;
if (t_active) {
  t_row = A_bmt_row(bmt);
  const long long first = A_bmt_first_nz(bmt);
  const long long stride = A_bmt_stride(bmt);
  const long long size = A_bmt_size(bmt);
  for (long long k = 0; k < size; ++k) {
    const long long nz = first + k * stride;
    ST_MAC(t_sum, A_nz_val(nz), A_nz_col(nz));
  }
}
$EMIT(t_row, t_sum)
//@ thread_lanes
// THREAD_TOTAL_RED, lanes over columns: the group walks one thread block's entries together, so
// it loads $COL_LANES of them at once, coalesced, one per lane, and hands each to every lane by a
// shuffle. The B rows of consecutive entries are then loads in flight together, instead of an
// index load and a B load after another for every entry (a long row's latency chain).
long long t_row = -1;
st_acc_t t_sum = 0;
if (t_active) {  // uniform over the group: every lane of it walks the same thread block
  t_row = A_bmt_row(bmt);
  const long long first = A_bmt_first_nz(bmt);
  const long long stride = A_bmt_stride(bmt);
  const long long size = A_bmt_size(bmt);
  const int st_gl = (int)(threadIdx.x & ($COL_LANES - 1));
  const unsigned st_gmask =
      $COL_LANES == 32 ? ST_FULL_MASK : ((1u << ($COL_LANES & 31)) - 1u) << st_g0;
  for (long long k0 = 0; k0 < size; k0 += $COL_LANES) {
    // A lane past the end reads the first entry again; its copy is never handed out.
    const long long nz = first + (k0 + st_gl < size ? k0 + st_gl : 0) * stride;
    const auto st_v = A_nz_val(nz);
    const int st_c = (int)A_nz_col(nz);
    const int st_cnt = size - k0 < $COL_LANES ? (int)(size - k0) : $COL_LANES;
#pragma unroll 8
    for (int q = 0; q < st_cnt; ++q)
      ST_MAC(t_sum, __shfl_sync(st_gmask, st_v, q, $COL_LANES),
             __shfl_sync(st_gmask, st_c, q, $COL_LANES));
  }
}
$EMIT(t_row, t_sum)
