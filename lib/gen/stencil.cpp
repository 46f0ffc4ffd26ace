#include "gen/stencil.hpp"

#include <string>

#include "core/error.hpp"
#include "gen/assemble.hpp"

namespace sparsetune::gen {

namespace {

constexpr std::int64_t kMaxRows = (std::int64_t{1} << 31) - 1;

// One routine for every stencil: `full` selects the 3^d box, otherwise only the 2 d axis
// neighbours. Visiting offsets z-major, then y, then x yields ascending columns.
Csr64 stencil(std::int64_t nx, std::int64_t ny, std::int64_t nz, bool full, double centre) {
  const std::int64_t n = nx * ny * nz;
  RowWriter w(n, n, n * (full ? 27 : 7));
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x) {
        for (int dz = -1; dz <= 1; ++dz)
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
              const int moved = (dx != 0) + (dy != 0) + (dz != 0);
              if (!full && moved > 1) continue;
              const std::int64_t X = x + dx, Y = y + dy, Z = z + dz;
              if (X < 0 || X >= nx || Y < 0 || Y >= ny || Z < 0 || Z >= nz) continue;
              w.add(X + nx * (Y + ny * Z), moved == 0 ? centre : -1.0);
            }
        w.end_row();
      }
  return w.finish();
}

void check_dims(std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  if (nx < 1) throw Error("stencil: nx must be at least 1, got " + std::to_string(nx));
  if (ny < 1) throw Error("stencil: ny must be at least 1, got " + std::to_string(ny));
  if (nz < 1) throw Error("stencil: nz must be at least 1, got " + std::to_string(nz));
  if (nx > kMaxRows / ny || nx * ny > kMaxRows / nz)
    throw Error("stencil: nx * ny * nz exceeds 2^31 - 1 grid points");
}

}  // namespace

Csr64 stencil_2d(std::int64_t nx, std::int64_t ny, int points) {
  check_dims(nx, ny, 1);
  if (points != 5 && points != 9)
    throw Error("stencil2d: points must be 5 or 9, got " + std::to_string(points));
  check_entry_budget(static_cast<double>(nx * ny) * points, "stencil2d",
                     static_cast<double>(nx * ny));
  return points == 5 ? stencil(nx, ny, 1, false, 4.0) : stencil(nx, ny, 1, true, 8.0);
}

Csr64 stencil_3d(std::int64_t nx, std::int64_t ny, std::int64_t nz, int points) {
  check_dims(nx, ny, nz);
  if (points != 7 && points != 27)
    throw Error("stencil3d: points must be 7 or 27, got " + std::to_string(points));
  check_entry_budget(static_cast<double>(nx * ny * nz) * points, "stencil3d",
                     static_cast<double>(nx * ny * nz));
  return points == 7 ? stencil(nx, ny, nz, false, 6.0) : stencil(nx, ny, nz, true, 26.0);
}

}  // namespace sparsetune::gen
