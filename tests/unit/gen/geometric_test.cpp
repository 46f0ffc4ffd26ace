#include "gen/geometric.hpp"

#include <catch2/catch.hpp>
#include <cmath>

#include "checks.hpp"
#include "core/error.hpp"

using namespace sparsetune;
using namespace sparsetune::gen;

TEST_CASE("geometric graph holds exactly the pairs closer than the radius", "[gen][geometric]") {
  for (double radius : {0.03, 0.11, 0.5, 2.0}) {
    const auto pts = geometric_points(400, 17);
    const auto a = geometric_graph(pts, radius);
    INFO("radius " << radius);
    gen_test::require_well_formed(a);
    CHECK(gen_test::symmetric(a));
    // Brute force over all pairs, the distance measured independently of the generator.
    std::int64_t pairs = 0;
    bool all_present = true;
    for (std::int64_t i = 0; i < 400; ++i)
      for (std::int64_t j = 0; j < 400; ++j) {
        if (i == j) continue;
        const double d = std::hypot(pts[i].x - pts[j].x, pts[i].y - pts[j].y);
        if (d < radius - 1e-12) {
          ++pairs;
          all_present = all_present && gen_test::value_at(a, i, j) != 0.0;
        }
      }
    CHECK(all_present);
    // Every stored edge is within the radius and carries 1 - d / r.
    bool all_close = true;
    for (std::int64_t i = 0; i < a.rows; ++i)
      for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        const auto j = a.col_idx[k];
        const double d = std::hypot(pts[i].x - pts[j].x, pts[i].y - pts[j].y);
        all_close = all_close && i != j && d < radius + 1e-12 &&
                    std::abs(a.val[k] - (1 - d / radius)) < 1e-12;
      }
    CHECK(all_close);
    CHECK(std::abs(a.nnz() - pairs) <= 2);  // only pairs at the radius within rounding may differ
    if (radius >= 1.5) CHECK(a.nnz() == 400 * 399);
  }
}

TEST_CASE("geometric points are uniform and seeded", "[gen][geometric]") {
  const auto p = geometric_points(10000, 1);
  std::int64_t left = 0;
  for (const auto& q : p) {
    REQUIRE(q.x >= 0.0);
    REQUIRE(q.x < 1.0);
    REQUIRE(q.y >= 0.0);
    REQUIRE(q.y < 1.0);
    left += q.x < 0.5;
  }
  CHECK(std::abs(left - 5000) < 5 * 50);
  CHECK(gen_test::identical(random_geometric(2000, 0.05, 3), random_geometric(2000, 0.05, 3)));
  CHECK_FALSE(
      gen_test::identical(random_geometric(2000, 0.05, 3), random_geometric(2000, 0.05, 4)));
}

TEST_CASE("a radius from a degree gives about that degree away from the border",
          "[gen][geometric]") {
  const std::int64_t n = 20000;
  const double r = geometric_radius_for_degree(n, 10.0);
  const auto pts = geometric_points(n, 8);
  const auto a = geometric_graph(pts, r);
  // Points farther than r from the border see the full disc: Poisson-like degree with mean 10.
  double sum = 0;
  std::int64_t inner = 0;
  for (std::int64_t i = 0; i < n; ++i)
    if (pts[i].x > r && pts[i].x < 1 - r && pts[i].y > r && pts[i].y < 1 - r) {
      sum += static_cast<double>(a.row_length(i));
      ++inner;
    }
  CHECK(std::abs(sum / inner - 10.0) < 5 * std::sqrt(10.0 / inner));
}

TEST_CASE("geometric rejects a non-positive radius or point count", "[gen][geometric]") {
  CHECK_THROWS_WITH(random_geometric(10, 0.0, 1), Catch::Contains("radius"));
  CHECK_THROWS_WITH(random_geometric(10, -1.0, 1), Catch::Contains("radius"));
  CHECK_THROWS_WITH(random_geometric(0, 0.1, 1), Catch::Contains("n must"));
  CHECK(random_geometric(1, 0.1, 1).nnz() == 0);
}
