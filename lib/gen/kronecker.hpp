#pragma once
// Graph500 Kronecker (R-MAT) graphs: 2^scale vertices and edge_factor * 2^scale edges, each
// edge placed by `scale` recursive choices of a quadrant of the adjacency matrix with
// probabilities A (top left), B (top right), C (bottom left) and D = 1 - A - B - C.
#include <cstdint>

#include "core/matrix.hpp"

namespace sparsetune::gen {

struct KroneckerParams {
  int scale = 16;                 // n = 2^scale vertices, 1..30
  std::int64_t edge_factor = 16;  // edges drawn = edge_factor * n
  double a = 0.57, b = 0.19, c = 0.19;
  bool permute = true;     // relabel vertices by a random permutation, as Graph500 does
  bool self_loops = true;  // keep edges (v, v); when false they are dropped
  bool symmetric = false;  // store every edge in both directions (an undirected graph)
};

// Throws sparsetune::Error naming the first parameter out of range.
void validate(const KroneckerParams& p);

// The drawn edge list (after permutation), before self-loops are dropped and repeats merged;
// values uniform in (0, 1]. Row k of the result is edge k.
Coo64 kronecker_edges(const KroneckerParams& p, std::uint64_t seed);

// The adjacency matrix: n x n, repeated edges merged keeping the first drawn value, self-loops
// kept or dropped as asked. When symmetric, each edge is stored as (min, max), merged, then
// mirrored, so that A == A^T exactly, values included.
Csr64 kronecker(const KroneckerParams& p, std::uint64_t seed);

}  // namespace sparsetune::gen
