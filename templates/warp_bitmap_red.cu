//@ accept
// WARP_BITMAP_RED: a ballot of row starts bounds each row's shuffle-down sum.
const st_idx_t b_row = IN_ROW;
st_acc_t b_v = IN_V;
const st_idx_t b_prev = __shfl_up_sync(ST_FULL_MASK, b_row, 1);
const bool b_head = lane == 0 || b_prev != b_row;
const unsigned b_heads = __ballot_sync(ST_FULL_MASK, b_head);
const unsigned b_above = lane == 31 ? 0u : b_heads & ~((2u << lane) - 1u);
const int b_end = b_above ? __ffs(b_above) - 2 : 31;
for (int d = 1; d < 32; d <<= 1) {
  const st_acc_t down = __shfl_down_sync(ST_FULL_MASK, b_v, d);
  if (lane + d <= b_end) b_v += down;
}
if (b_head && b_row >= 0) {
  $EMIT(b_row, b_v)
}
