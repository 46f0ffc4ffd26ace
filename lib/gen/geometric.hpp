#pragma once
// Random geometric graphs: n points uniform in the unit square, an edge between every two
// distinct points closer than the radius (Euclidean, no wrap-around). Symmetric, no self-loops,
// value 1 - distance / radius in (0, 1]. Built with a cell grid of side >= radius, so only the
// 3 x 3 neighbouring cells of each point are searched: O(n + edges).
#include <cstdint>
#include <vector>

#include "core/matrix.hpp"

namespace sparsetune::gen {

struct Point2 {
  double x, y;
};

// The n points a seed gives (point i is vertex i).
std::vector<Point2> geometric_points(std::int64_t n, std::uint64_t seed);

// Radius that gives an expected degree of `degree` away from the border: (n - 1) pi r^2 = degree.
double geometric_radius_for_degree(std::int64_t n, double degree);

// The graph on the given points (radius > 0).
Csr64 geometric_graph(const std::vector<Point2>& points, double radius);

// geometric_graph(geometric_points(n, seed), radius).
Csr64 random_geometric(std::int64_t n, double radius, std::uint64_t seed);

}  // namespace sparsetune::gen
