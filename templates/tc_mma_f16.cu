//@ thread
// TC_MMA_F16 (f16 formats): the warp multiplies its chunk of 8 rows on fp16 tensor cores with fp32
// accumulation, one 8 x 8 TC block per mma.sync.m16n8k8. Lane l (g = l/4, t = l%4) gives row g's
// slots 2t and 2t + 1 as B[2t + i][g] and x at their columns as A[g][2t + i] (rows 8-15 of A are
// zero), so D[g][g] collects row g's sum: lane 4g + g/2, register g % 2 (as in TC_MMA_F64). A slot
// without an entry gives x = 0, so an infinite x never reaches a sum through it (ST_MAC's rule).
float tc_d0 = 0.f, tc_d1 = 0.f, tc_d2 = 0.f, tc_d3 = 0.f;
{
  unsigned short tc_v[2], tc_x[2];
#ifdef A_tc_bit
  // Dense unfolding: bits 2l and 2l + 1 of a block's 64-bit bitmap (two words) are lane l's
  // slots; a value is at TCPtr[block] plus the set bits below it.
  const st_idx_t tc_end = t_active ? A_bmw_first_tc(bmw + 1) : 0;
  for (st_idx_t b = t_active ? A_bmw_first_tc(bmw) : 0; b < tc_end; ++b) {
    const unsigned lo = (unsigned)A_tc_bit(2 * b), hi = (unsigned)A_tc_bit(2 * b + 1);
    const unsigned word = lane < 16 ? lo : hi;
    const int bit = (2 * lane) & 31;
    st_idx_t at = A_tc_ptr(b) + (lane < 16 ? 0 : __popc(lo)) + __popc(word & ((1u << bit) - 1u));
    for (int i = 0; i < 2; ++i) {
      const bool set = (word >> (bit + i)) & 1u;
      const float v = set ? A_nz_val(at) : 0.f;
      at += set ? 1 : 0;
      asm("cvt.rn.f16.f32 %0, %1;" : "=h"(tc_v[i]) : "f"(v));
      const unsigned short xv = x[A_tc_col(b * 8 + 2 * (lane & 3) + i)];
      tc_x[i] = v != 0.f ? xv : (unsigned short)0;
    }
#else
  // Sparse encoding: lane l's slots are entries l, l + 32, ... of the chunk, two per block.
  const st_idx_t first = t_active ? A_bmt_first_nz(bmt) : 0;
  const st_idx_t stride = t_active ? A_bmt_stride(bmt) : 0;
  const st_idx_t size = t_active ? A_bmt_size(bmt) : 0;
  for (st_idx_t k = 0; k < size; k += 2) {
    for (int i = 0; i < 2; ++i) {
      const st_idx_t nz = first + (k + i) * stride;
      const float v = A_nz_val(nz);
      asm("cvt.rn.f16.f32 %0, %1;" : "=h"(tc_v[i]) : "f"(v));
      const unsigned short xv = x[A_nz_col(nz)];
      tc_x[i] = v != 0.f ? xv : (unsigned short)0;
    }
#endif
    const unsigned a01 = (unsigned)tc_x[0] | ((unsigned)tc_x[1] << 16);
    const unsigned b01 = (unsigned)tc_v[0] | ((unsigned)tc_v[1] << 16);
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
        "{%0, %1, %2, %3};"
        : "+f"(tc_d0), "+f"(tc_d1), "+f"(tc_d2), "+f"(tc_d3)
        : "r"(a01), "r"(0u), "r"(b01));
  }
}
(void)tc_d2;
(void)tc_d3;
const int tc_r = lane >> 2;
const st_idx_t t_row = t_active && (lane & 3) == (tc_r >> 1) ? A_bmt_row(bmt) : (st_idx_t)-1;
$EMIT(t_row, (st_acc_t)((tc_r & 1) ? tc_d1 : tc_d0))
