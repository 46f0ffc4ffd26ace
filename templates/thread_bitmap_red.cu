//@ thread
// THREAD_BITMAP_RED: a running sum per row; a row step marks where a row ends.
st_idx_t t_row = -1;
st_acc_t t_sum = 0;
if (t_active) {
  $THREAD_RANGE
  for (st_idx_t k = 0; k < size; ++k) {
    const st_idx_t nz = first + k * stride;
    const st_idx_t step = A_nz_row_delta(nz);
    if (step != 0) {
      $SIDE(t_row, t_sum)
      t_row += step;
      t_sum = 0;
    }
    ST_MAC(t_sum, A_nz_val(nz), A_nz_col(nz));
  }
}
$EMIT(t_row, t_sum)
//@ thread_loads
// THREAD_BITMAP_RED, $LOADS entries at a time: a batch's loads (its row steps, values, columns,
// then x at the columns) all issue before its first sum, so they wait on memory together instead
// of one entry after another. The sums run in the entries' order, as above.
st_idx_t t_row = -1;
st_acc_t t_sum = 0;
if (t_active) {
  $THREAD_RANGE
  for (st_idx_t k0 = 0; k0 < size; k0 += $LOADS) {
    st_acc_t st_p[$LOADS];
    st_idx_t st_d[$LOADS];
#pragma unroll
    for (int u = 0; u < $LOADS; ++u) {
      // Past the end: the first entry again (no branch between the loads); never summed.
      const st_idx_t nz = first + (k0 + u < size ? k0 + u : 0) * stride;
      st_d[u] = A_nz_row_delta(nz);
      st_p[u] = 0;
      ST_MAC(st_p[u], A_nz_val(nz), A_nz_col(nz));
    }
#pragma unroll
    for (int u = 0; u < $LOADS; ++u) {
      if (k0 + u < size) {
        if (st_d[u] != 0) {
          $SIDE(t_row, t_sum)
          t_row += st_d[u];
          t_sum = 0;
        }
        t_sum += st_p[u];
      }
    }
  }
}
$EMIT(t_row, t_sum)
//@ thread_lanes
// THREAD_BITMAP_RED, lanes over columns: the group walks one thread block's entries together, as
// THREAD_TOTAL_RED's lanes do ($COL_LANES loaded at once, one per lane, handed out by shuffles 8
// at a time). A row step is the same for every lane of the group, so the group flushes a finished
// row together. Whole tiles load a batch's 8 B row segments before its first multiply-add: a row
// ending inside the batch does not hold back the next entries' loads.
st_idx_t t_row = -1;
st_acc_t t_sum = 0;
if (t_active) {  // uniform over the group: every lane of it walks the same thread block
  $THREAD_RANGE
  $LANE_GROUP
  for (st_idx_t k0 = 0; k0 < size; k0 += $COL_LANES) {
    // A lane past the end reads the first entry again (no row step); its copy is never used.
    const bool st_in = k0 + st_gl < size;
    const st_idx_t nz = first + (st_in ? k0 + st_gl : 0) * stride;
    auto st_v = A_nz_val(nz);  // not const: st_v8 takes its type
    const int st_c = (int)A_nz_col(nz);
    const st_idx_t st_d = st_in ? (st_idx_t)A_nz_row_delta(nz) : 0;
    const int st_cnt = size - k0 < $COL_LANES ? (int)(size - k0) : $COL_LANES;
    for (int q0 = 0; q0 < st_cnt; q0 += 8) {
      decltype(st_v) st_v8[8];
      int st_c8[8];
      st_idx_t st_d8[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        st_v8[u] = __shfl_sync(st_gmask, st_v, q0 + u, $COL_LANES);
        st_c8[u] = __shfl_sync(st_gmask, st_c, q0 + u, $COL_LANES);
        st_d8[u] = __shfl_sync(st_gmask, st_d, q0 + u, $COL_LANES);
      }
      // Past the count: value 0 (it adds nothing) at the batch's first column, no row step.
#pragma unroll
      for (int u = 1; u < 8; ++u)
        if (q0 + u >= st_cnt) st_v8[u] = 0, st_c8[u] = st_c8[0], st_d8[u] = 0;
      st_acc_t st_b8[8];
      if (st_full) {
#pragma unroll
        for (int u = 0; u < 8; ++u) ST_LOAD_FULL(st_b8[u], st_c8[u]);
      }
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        if (st_d8[u] != 0) {
          $SIDE(t_row, t_sum)
          t_row += st_d8[u];
          t_sum = 0;
        }
        if (st_full)
          ST_FMA(t_sum, st_v8[u], st_b8[u]);
        else
          ST_MAC(t_sum, st_v8[u], st_c8[u]);
      }
    }
  }
}
$EMIT(t_row, t_sum)
