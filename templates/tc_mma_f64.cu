//@ thread
// TC_MMA_F64: the warp multiplies its chunk of 8 rows on fp64 tensor cores, one 8 x 4 TC block per
// mma.sync.m8n8k4. Lane l gives slot (row l/4, column l%4) of the block as its A element and x at
// that slot's column as its B element, so the diagonal of D = A B + D collects the rows' sums:
// row r's in lane 4r + r/2, register r % 2 (DASP's layout). A slot without an entry has A = 0 and
// then B = 0, so an infinite x never reaches a sum through it (ST_MAC's rule); x is still loaded.
// Every lane of a chunk takes the same number of steps, so the mma is warp-uniform.
double tc_d0 = 0.0, tc_d1 = 0.0;
#ifdef A_tc_bit
// Dense unfolding: bit l of a block's bitmap says whether lane l's slot holds an entry; its value
// is at TCPtr[block] plus the set bits below it.
{
  const st_idx_t tc_end = t_active ? A_bmw_first_tc(bmw + 1) : 0;
  for (st_idx_t b = t_active ? A_bmw_first_tc(bmw) : 0; b < tc_end; ++b) {
    const unsigned bits = (unsigned)A_tc_bit(b);
    const bool set = (bits >> lane) & 1u;
    const double a =
        set ? (double)A_nz_val(A_tc_ptr(b) + __popc(bits & ((1u << lane) - 1u))) : 0.0;
    const double xv = (double)st_load(x[A_tc_col(b * 4 + (lane & 3))]);
    const double bv = a != 0.0 ? xv : 0.0;
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
                 : "+d"(tc_d0), "+d"(tc_d1)
                 : "d"(a), "d"(bv));
  }
}
#else
// Sparse encoding: lane l's slots are entries l, l + 32, ... of the chunk, one block per step.
{
  const st_idx_t first = t_active ? A_bmt_first_nz(bmt) : 0;
  const st_idx_t stride = t_active ? A_bmt_stride(bmt) : 0;
  const st_idx_t size = t_active ? A_bmt_size(bmt) : 0;
  for (st_idx_t k = 0; k < size; ++k) {
    const st_idx_t nz = first + k * stride;
    const double a = (double)A_nz_val(nz);
    const double xv = (double)st_load(x[A_nz_col(nz)]);
    const double bv = a != 0.0 ? xv : 0.0;
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
                 : "+d"(tc_d0), "+d"(tc_d1)
                 : "d"(a), "d"(bv));
  }
}
#endif
const int tc_r = lane >> 2;
const st_idx_t t_row = t_active && (lane & 3) == (tc_r >> 1) ? A_bmt_row(bmt) : (st_idx_t)-1;
$EMIT(t_row, (st_acc_t)((tc_r & 1) ? tc_d1 : tc_d0))
