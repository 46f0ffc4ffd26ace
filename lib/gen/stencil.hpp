#pragma once
// Finite-difference stencils on regular grids in natural ordering (x fastest, then y, then z):
// grid point (x, y, z) is row x + nx * (y + ny * z). Values are Laplacian-like: the diagonal
// holds the number of neighbours of the full stencil (4, 8, 6 or 26) and each neighbour -1, so
// every matrix is symmetric and (weakly) diagonally dominant; boundary rows simply lose the
// neighbours that fall outside the grid.
#include <cstdint>

#include "core/matrix.hpp"

namespace sparsetune::gen {

// 5-point (edge neighbours) or 9-point (edge and corner neighbours) stencil on nx x ny.
// nnz: 5 nx ny - 2 nx - 2 ny for 5 points; (3 nx - 2)(3 ny - 2) for 9 points.
Csr64 stencil_2d(std::int64_t nx, std::int64_t ny, int points);

// 7-point (face neighbours) or 27-point (all neighbours) stencil on nx x ny x nz.
// nnz: 7 N - 2 (ny nz + nx nz + nx ny) for 7 points; (3 nx - 2)(3 ny - 2)(3 nz - 2) for 27.
Csr64 stencil_3d(std::int64_t nx, std::int64_t ny, std::int64_t nz, int points);

}  // namespace sparsetune::gen
