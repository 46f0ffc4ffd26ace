//@ accept
// GMEM_ATOM_RED: rows may be shared between units, so add atomically (into a y scaled by beta).
if (IN_ROW >= 0) atomicAdd(&y[A_origin_row(IN_ROW)], alpha * (IN_V));
//@ accept_spmm
// GMEM_ATOM_RED (SpMM): rows may be shared, so each column of the tile adds atomically into C.
if (IN_ROW >= 0) st_tile_atomic_add(&C[A_origin_row(IN_ROW) * ldc + st_n0], alpha, IN_V, st_nt);
//@ accept_spmm_col
// GMEM_ATOM_RED (SpMM, column-major C): each column of the tile adds atomically, ldc apart.
if (IN_ROW >= 0)
  st_tile_atomic_add_cm(&C[A_origin_row(IN_ROW) + st_n0 * ldc], ldc, alpha, IN_V, st_nt);
