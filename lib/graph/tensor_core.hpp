#pragma once
// CPU models of the tensor-core instructions the TC fragments issue, register by register, so that
// the interpreter computes exactly what each lane holds after an `mma.sync`.
#include <array>

namespace sparsetune::graph {

// Per-lane registers of one warp-wide instruction.
using LaneValues = std::array<double, 32>;
using LaneAccumulators = std::array<std::array<double, 2>, 32>;

// mma.sync.aligned.m8n8k4.row.col.f64 (PTX ISA, fragments of m8n8k4 with .f64): D = A·B + C with
// A 8 × 4, B 4 × 8, C and D 8 × 8. Lane l holds A[l/4][l%4], B[l%4][l/4] and
// D[l/4][2(l%4) + i] for i = 0, 1. Each element is the fused chain
// c + a0·b0 + a1·b1 + a2·b2 + a3·b3 in k order, one rounding per step (the model's order; the
// hardware's is not specified, and tests compare with the fp64 reference within a tolerance).
void mma_m8n8k4_f64(const LaneValues& a, const LaneValues& b, LaneAccumulators& d);

// mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32: D = A·B + C with A 16 × 8 and B 8 × 8 in fp16,
// C and D 16 × 8 in fp32. Lane l (g = l/4, t = l%4) holds A[g][2t + i] in a[l][i] and
// A[g + 8][2t + i] in a[l][2 + i], B[2t + i][g] in b[l][i], D[g][2t + i] in d[l][i] and
// D[g + 8][2t + i] in d[l][2 + i]. Products of fp16 values are exact in fp64; each element is
// summed in fp64 and rounded to fp32 once (the model's rounding; the hardware's is not specified).
using HalfFragmentA = std::array<std::array<double, 4>, 32>;
using HalfFragmentB = std::array<std::array<double, 2>, 32>;
using FloatAccumulators = std::array<std::array<double, 4>, 32>;
void mma_m16n8k8_f16_f32(const HalfFragmentA& a, const HalfFragmentB& b, FloatAccumulators& d);

// The lane and register holding D[r][r] of an m8n8k4 accumulator: a warp that gives lane l the
// entry (l/4, l%4) of a block as its A element and x at that entry's column as its B element
// finds row r's sum there (DASP's diagonal layout). The same holds for m16n8k8 when lane l gives
// row l/4's slots 2(l%4) + i of an 8 × 8 block as B[2(l%4) + i][l/4] and x at their columns as
// A[l/4][2(l%4) + i]: D[r][r] is lane 4r + r/2's register r % 2.
inline int diagonal_lane(int r) { return 4 * r + r / 2; }
inline int diagonal_register(int r) { return r % 2; }

}  // namespace sparsetune::graph
