#include "gen/stencil.hpp"

#include <catch2/catch.hpp>
#include <vector>

#include "checks.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"

using namespace sparsetune;
using namespace sparsetune::gen;

TEST_CASE("5-point stencil on 4 x 3 has 46 entries and the expected rows", "[gen][stencil]") {
  const auto a = stencil_2d(4, 3, 5);
  gen_test::require_well_formed(a);
  CHECK(a.rows == 12);
  CHECK(a.cols == 12);
  CHECK(a.nnz() == 5 * 12 - 2 * 3 - 2 * 4);  // 46
  CHECK(gen_test::symmetric(a));
  // Grid point (1, 1) is row 5: neighbours 1 (below), 4, 6 (left/right), 9 (above).
  CHECK(std::vector<std::int64_t>(a.col_idx.begin() + a.row_ptr[5],
                                  a.col_idx.begin() + a.row_ptr[6]) ==
        std::vector<std::int64_t>{1, 4, 5, 6, 9});
  CHECK(gen_test::value_at(a, 5, 5) == 4.0);
  CHECK(gen_test::value_at(a, 5, 4) == -1.0);
  // Corner (0, 0): itself, right neighbour, upper neighbour.
  CHECK(a.row_length(0) == 3);
}

TEST_CASE("9-point, 7-point and 27-point counts follow their formulas", "[gen][stencil]") {
  const auto nine = stencil_2d(4, 3, 9);
  gen_test::require_well_formed(nine);
  CHECK(nine.nnz() == (3 * 4 - 2) * (3 * 3 - 2));  // 70
  CHECK(gen_test::symmetric(nine));

  const std::int64_t nx = 5, ny = 4, nz = 3, N = nx * ny * nz;
  const auto seven = stencil_3d(nx, ny, nz, 7);
  gen_test::require_well_formed(seven);
  CHECK(seven.nnz() == 7 * N - 2 * (ny * nz + nx * nz + nx * ny));
  CHECK(gen_test::symmetric(seven));

  for (std::int64_t n : {1, 2, 3, 6}) {
    const auto cube = stencil_3d(n, n, n, 27);
    gen_test::require_well_formed(cube);
    CHECK(cube.nnz() == (3 * n - 2) * (3 * n - 2) * (3 * n - 2));
    CHECK(gen_test::symmetric(cube));
  }
}

TEST_CASE("interior rows of every stencil sum to zero, boundary rows to a positive value",
          "[gen][stencil]") {
  const auto a = stencil_3d(4, 4, 4, 27);
  const auto row_sum = [&](std::int64_t r) {
    double s = 0;
    for (auto k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) s += a.val[k];
    return s;
  };
  const std::int64_t interior = 1 + 4 * (1 + 4 * 1);  // (1, 1, 1)
  CHECK(a.row_length(interior) == 27);
  CHECK(row_sum(interior) == 0.0);
  CHECK(row_sum(0) == 26.0 - 7.0);  // a corner keeps 7 of its 26 neighbours
  const auto b = stencil_2d(3, 3, 9);
  CHECK(b.row_length(4) == 9);
  CHECK(gen_test::value_at(b, 4, 4) == 8.0);
}

TEST_CASE("stencils reject bad sizes and point counts", "[gen][stencil]") {
  CHECK_THROWS_WITH(stencil_2d(0, 3, 5), Catch::Contains("nx"));
  CHECK_THROWS_WITH(stencil_2d(3, 3, 7), Catch::Contains("points"));
  CHECK_THROWS_WITH(stencil_3d(3, 3, -1, 7), Catch::Contains("nz"));
  // Refused before anything is allocated: 2^31 - 1 grid points of 27 entries (past the entry limit)
  CHECK_THROWS_WITH(stencil_3d(1290, 1290, 1290, 27),
                    Catch::Contains("stencil3d: about 5.8e+10 entries"));
  // 2^28 points of 27 entries (7.2e9, under the entry limit): about 120 GB, where that is more
  // than this machine has (CI's 24 GiB).
  if (physical_memory_bytes() < 1.1e11)
    CHECK_THROWS_WITH(stencil_3d(1024, 1024, 256, 27), Catch::Contains("stencil3d needs about"));
  CHECK_THROWS_WITH(stencil_3d(3, 3, 3, 9), Catch::Contains("points"));
  CHECK_THROWS_AS(stencil_3d(2000, 2000, 2000, 7), Error);  // 8e9 rows
}
