//@ thread
// THREAD_TOTAL_RED: the thread's entries share one row; one sum.
st_idx_t t_row = -1;
st_acc_t t_sum = 0;
if (t_active) {
  $THREAD_RANGE
  for (st_idx_t k = 0; k < size; ++k) {
    const st_idx_t nz = first + k * stride;
    ST_MAC(t_sum, A_nz_val(nz), A_nz_col(nz));
  }
}
$EMIT(t_row, t_sum)
//@ thread_loads
// THREAD_TOTAL_RED, $LOADS entries at a time: a batch's loads (values, columns, then x at the
// columns) all issue before its first sum, so they wait on memory together instead of one entry
// after another. The sum runs in the entries' order, as above.
st_idx_t t_row = -1;
st_acc_t t_sum = 0;
if (t_active) {
  $THREAD_RANGE
  for (st_idx_t k0 = 0; k0 < size; k0 += $LOADS) {
    st_acc_t st_p[$LOADS];
#pragma unroll
    for (int u = 0; u < $LOADS; ++u) {
      // Past the end: the first entry again (no branch between the loads); never summed.
      const st_idx_t nz = first + (k0 + u < size ? k0 + u : 0) * stride;
      st_p[u] = 0;
      ST_MAC(st_p[u], A_nz_val(nz), A_nz_col(nz));
    }
#pragma unroll
    for (int u = 0; u < $LOADS; ++u)
      if (k0 + u < size) t_sum += st_p[u];
  }
}
$EMIT(t_row, t_sum)
//@ thread_lanes
// THREAD_TOTAL_RED, lanes over columns: the group walks one thread block's entries together, so
// it loads $COL_LANES of them at once, coalesced, one per lane, and hands them to every lane by
// shuffles, 8 at a time. Whole tiles then load the 8 B row segments with no branch between them
// (in flight together) instead of an index load and a B load after another for every entry,
// which left a long row's warp running alone long after the others.
st_idx_t t_row = -1;
st_acc_t t_sum = 0;
if (t_active) {  // uniform over the group: every lane of it walks the same thread block
  $THREAD_RANGE
  $LANE_GROUP
  for (st_idx_t k0 = 0; k0 < size; k0 += $COL_LANES) {
    // A lane past the end reads the first entry again; its copy is never used.
    const st_idx_t nz = first + (k0 + st_gl < size ? k0 + st_gl : 0) * stride;
    auto st_v = A_nz_val(nz);  // not const: st_v8 takes its type
    const int st_c = (int)A_nz_col(nz);
    const int st_cnt = size - k0 < $COL_LANES ? (int)(size - k0) : $COL_LANES;
    for (int q0 = 0; q0 < st_cnt; q0 += 8) {
      decltype(st_v) st_v8[8];
      int st_c8[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        st_v8[u] = __shfl_sync(st_gmask, st_v, q0 + u, $COL_LANES);
        st_c8[u] = __shfl_sync(st_gmask, st_c, q0 + u, $COL_LANES);
      }
      // Past the count: value 0 (it adds nothing) at the batch's first column (a real one).
#pragma unroll
      for (int u = 1; u < 8; ++u)
        if (q0 + u >= st_cnt) st_v8[u] = 0, st_c8[u] = st_c8[0];
      if (st_full) {
#pragma unroll
        for (int u = 0; u < 8; ++u) ST_MAC_FULL(t_sum, st_v8[u], st_c8[u]);
      } else {
#pragma unroll
        for (int u = 0; u < 8; ++u) ST_MAC(t_sum, st_v8[u], st_c8[u]);
      }
    }
  }
}
$EMIT(t_row, t_sum)
