//@ accept
// WARP_SEG_RED: segmented inclusive scan over the lanes; the last lane of each row emits.
st_idx_t s_row = IN_ROW;
st_acc_t s_v = IN_V;
const st_idx_t s_prev = __shfl_up_sync(ST_FULL_MASK, s_row, 1);
int s_head = lane == 0 || s_prev != s_row;
for (int d = 1; d < 32; d <<= 1) {
  const st_acc_t up_v = __shfl_up_sync(ST_FULL_MASK, s_v, d);
  const int up_head = __shfl_up_sync(ST_FULL_MASK, s_head, d);
  if (lane >= d && !s_head) {
    s_v += up_v;
    s_head = up_head;
  }
}
const st_idx_t s_next = __shfl_down_sync(ST_FULL_MASK, s_row, 1);
if ((lane == 31 || s_next != s_row) && s_row >= 0) {
  $EMIT(s_row, s_v)
}
