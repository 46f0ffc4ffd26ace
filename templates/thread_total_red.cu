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
