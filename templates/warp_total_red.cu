//@ decl
st_acc_t w_acc = 0;
//@ bmw_begin
w_acc = 0;
//@ accept
// WARP_TOTAL_RED: the warp block holds one row; lanes keep adding until it ends.
w_acc += IN_V;
//@ bmw_end
for (int off = 16; off > 0; off >>= 1) w_acc += __shfl_xor_sync(ST_FULL_MASK, w_acc, off);
if (w_active && lane == 0) {
  $EMIT(A_bmw_row(bmw), w_acc)
}
//@ bmw_end_lanes
// COL_TILE lanes: the lanes of a group hold their thread blocks' sums for their own columns;
// only the groups are added, and the first group's lanes emit their columns.
for (int off = 16; off >= $COL_LANES; off >>= 1) w_acc += __shfl_xor_sync(ST_FULL_MASK, w_acc, off);
if (w_active && lane < $COL_LANES) {
  $EMIT(A_bmw_row(bmw), w_acc)
}
//@ bmw_end_warp_lanes
// COL_TILE lanes = 32: every lane walked all of the warp block's thread blocks for its own
// columns, so its sum is the row's: no shuffle, every lane emits its columns.
if (w_active) {
  $EMIT(A_bmw_row(bmw), w_acc)
}
