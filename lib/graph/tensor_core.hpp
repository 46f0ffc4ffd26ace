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

// The lane and register holding D[r][r] of an m8n8k4 accumulator: a warp that gives lane l the
// entry (l/4, l%4) of a block as its A element and x at that entry's column as its B element
// finds row r's sum there (DASP's diagonal layout).
inline int diagonal_lane(int r) { return 4 * r + r / 2; }
inline int diagonal_register(int r) { return r % 2; }

}  // namespace sparsetune::graph
