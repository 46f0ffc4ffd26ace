//@ accept
// Each row is written by at most one unit of this part, but other parts (or no unit) may write
// it: y is scaled by beta before the kernels run and every part adds alpha times its results.
if (IN_ROW >= 0) y[A_origin_row(IN_ROW)] += alpha * (IN_V);
//@ accept_spmm
// Adding (SpMM): C was scaled by beta first; each unit adds alpha times its row's tile.
if (IN_ROW >= 0) st_tile_add(&C[A_origin_row(IN_ROW) * ldc + st_n0], alpha, IN_V, st_nt);
//@ accept_spmm_col
// Adding (SpMM, column-major C): C was scaled by beta first; each column of the tile, ldc apart.
if (IN_ROW >= 0) st_tile_add_cm(&C[A_origin_row(IN_ROW) + st_n0 * ldc], ldc, alpha, IN_V, st_nt);
