//@ accept
// Store-only format: each row of y is written by exactly one unit over all parts (checked when
// designed), so y = alpha A x + beta y is stored in one pass and y is not zeroed first; beta = 0
// never reads y.
if (IN_ROW >= 0) {
  st_acc_t* const y_row = &y[A_origin_row(IN_ROW)];
  *y_row = beta == (st_acc_t)0 ? alpha * (IN_V) : alpha * (IN_V) + beta * *y_row;
}
//@ accept_spmm
// Store-only (SpMM): each row of C is written by exactly one unit per column tile, so
// C = alpha A B + beta C is stored in one pass; beta = 0 never reads C.
if (IN_ROW >= 0) st_tile_store(&C[A_origin_row(IN_ROW) * ldc + st_n0], alpha, beta, IN_V, st_nt);
//@ accept_spmm_col
// Store-only (SpMM, column-major C): as above, column j of the tile at C[row + (st_n0 + j) * ldc].
if (IN_ROW >= 0)
  st_tile_store_cm(&C[A_origin_row(IN_ROW) + st_n0 * ldc], ldc, alpha, beta, IN_V, st_nt);
