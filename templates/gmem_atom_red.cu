//@ accept
// GMEM_ATOM_RED: rows may be shared between units, so add atomically (into a y scaled by beta).
if (IN_ROW >= 0) atomicAdd(&y[A_origin_row(IN_ROW)], alpha * (IN_V));
