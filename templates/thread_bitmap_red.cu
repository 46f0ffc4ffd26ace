//@ thread
// THREAD_BITMAP_RED: a running sum per row; a row step marks where a row ends.
long long t_row = -1;
st_acc_t t_sum = 0;
if (t_active) {
  t_row = A_bmt_row(bmt);
  const long long first = A_bmt_first_nz(bmt);
  const long long stride = A_bmt_stride(bmt);
  const long long size = A_bmt_size(bmt);
  for (long long k = 0; k < size; ++k) {
    const long long nz = first + k * stride;
    const long long step = A_nz_row_delta(nz);
    if (step != 0) {
      $SIDE(t_row, t_sum)
      t_row += step;
      t_sum = 0;
    }
    ST_MAC(t_sum, A_nz_val(nz), A_nz_col(nz));
  }
}
$EMIT(t_row, t_sum)
//@ thread_lanes
// THREAD_BITMAP_RED, lanes over columns: the group walks one thread block's entries together, as
// THREAD_TOTAL_RED's lanes do ($COL_LANES loaded at once, one per lane, handed out by shuffles a
// batch at a time). A row step is the same for every lane of the group, so the group flushes a
// finished row together. Whole tiles load a batch's B row segments before its first multiply-add:
// a row ending inside the batch does not hold back the next entries' loads. Only the columns are
// shuffled before the loads; each entry's value and row step are shuffled where they are used, so
// the registers of a batch are its B segments (8 tiles, 4 from 8 columns up) and little else:
// 120-170 registers per thread held the kernel to a fifth of the SM's warps.
long long t_row = -1;
st_acc_t t_sum = 0;
if (t_active) {  // uniform over the group: every lane of it walks the same thread block
  t_row = A_bmt_row(bmt);
  const long long first = A_bmt_first_nz(bmt);
  const long long stride = A_bmt_stride(bmt);
  const long long size = A_bmt_size(bmt);
  $LANE_GROUP
  for (long long k0 = 0; k0 < size; k0 += $COL_LANES) {
    // A lane past the end reads the first entry again (no row step); its copy is never used.
    const bool st_in = k0 + st_gl < size;
    const long long nz = first + (st_in ? k0 + st_gl : 0) * stride;
    const auto st_v = A_nz_val(nz);  // a scalar (st_acc_t is the tile in these fragments)
    const int st_c = (int)A_nz_col(nz);
    const long long st_d = st_in ? (long long)A_nz_row_delta(nz) : 0;
    const int st_cnt = size - k0 < $COL_LANES ? (int)(size - k0) : $COL_LANES;
    constexpr int st_q = sizeof(st_acc_t) > 4 * sizeof(st_v) ? 4 : 8;  // entries per batch
    for (int q0 = 0; q0 < st_cnt; q0 += st_q) {
      // Past the count: the batch's first column (a real one), value 0 and no row step below.
      st_acc_t st_b8[st_q];
      if (st_full) {
#pragma unroll
        for (int u = 0; u < st_q; ++u) {
          const int c = __shfl_sync(st_gmask, st_c, q0 + u < st_cnt ? q0 + u : q0, $COL_LANES);
          ST_LOAD_FULL(st_b8[u], c);
        }
      }
#pragma unroll
      for (int u = 0; u < st_q; ++u) {
        const int src = q0 + u < st_cnt ? q0 + u : q0;
        const auto v = q0 + u < st_cnt ? __shfl_sync(st_gmask, st_v, src, $COL_LANES) : 0;
        const long long d = q0 + u < st_cnt ? __shfl_sync(st_gmask, st_d, src, $COL_LANES) : 0;
        if (d != 0) {
          $SIDE(t_row, t_sum)
          t_row += d;
          t_sum = 0;
        }
        if (st_full)
          ST_FMA(t_sum, v, st_b8[u]);
        else
          ST_MAC(t_sum, v, __shfl_sync(st_gmask, st_c, src, $COL_LANES));
      }
    }
  }
}
$EMIT(t_row, t_sum)
