//@ accept
// Store-only format: each row of y is written by exactly one unit over all parts (checked when
// designed), so y = alpha A x + beta y is stored in one pass and y is not zeroed first; beta = 0
// never reads y.
if (IN_ROW >= 0) {
  st_acc_t* const y_row = &y[A_origin_row(IN_ROW)];
  *y_row = beta == (st_acc_t)0 ? alpha * (IN_V) : alpha * (IN_V) + beta * *y_row;
}
