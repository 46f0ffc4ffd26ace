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
