#include "gen/geometric.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "gen/assemble.hpp"
#include "gen/rng.hpp"

namespace sparsetune::gen {

std::vector<Point2> geometric_points(std::int64_t n, std::uint64_t seed) {
  if (n < 1) throw Error("geometric: n must be at least 1, got " + std::to_string(n));
  Rng rng(seed);
  std::vector<Point2> pts(n);
  for (auto& p : pts) {
    p.x = rng.uniform();
    p.y = rng.uniform();
  }
  return pts;
}

double geometric_radius_for_degree(std::int64_t n, double degree) {
  if (n < 2) return 1.5;  // any radius: there is no other point
  return std::sqrt(degree / (static_cast<double>(n - 1) * 3.14159265358979323846));
}

Csr64 geometric_graph(const std::vector<Point2>& pts, double radius) {
  if (!(radius > 0.0) || !std::isfinite(radius))
    throw Error("geometric: radius must be positive, got " + std::to_string(radius));
  const auto n = static_cast<std::int64_t>(pts.size());
  const double area = 3.14159265358979323846 * radius * radius;
  check_entry_budget(static_cast<double>(n) * static_cast<double>(n) * std::min(1.0, area),
                     "geometric", 3.0 * static_cast<double>(n));
  // g cells per side with 1/g >= radius; no more cells than about one per point.
  const auto by_radius = static_cast<std::int64_t>(std::min(1e9, std::floor(1.0 / radius)));
  const auto by_count = static_cast<std::int64_t>(std::sqrt(static_cast<double>(n))) + 1;
  const std::int64_t g = std::max<std::int64_t>(1, std::min(by_radius, by_count));
  const auto cell_of = [g](double x) {
    return std::min(g - 1, static_cast<std::int64_t>(x * static_cast<double>(g)));
  };
  std::vector<std::int64_t> cell_ptr(g * g + 1, 0), in_cell(n), cell(n);
  for (std::int64_t i = 0; i < n; ++i) {
    cell[i] = cell_of(pts[i].x) + g * cell_of(pts[i].y);
    ++cell_ptr[cell[i] + 1];
  }
  for (std::int64_t c = 0; c < g * g; ++c) cell_ptr[c + 1] += cell_ptr[c];
  {
    std::vector<std::int64_t> next(cell_ptr.begin(), cell_ptr.end() - 1);
    for (std::int64_t i = 0; i < n; ++i) in_cell[next[cell[i]]++] = i;
  }
  const double r2 = radius * radius;
  RowWriter w(n, n, static_cast<std::int64_t>(static_cast<double>(n) * n * std::min(1.0, area)));
  std::vector<std::pair<std::int64_t, double>> row;
  for (std::int64_t i = 0; i < n; ++i) {
    row.clear();
    const std::int64_t cx = cell[i] % g, cy = cell[i] / g;
    for (std::int64_t y = std::max<std::int64_t>(0, cy - 1); y <= std::min(g - 1, cy + 1); ++y)
      for (std::int64_t x = std::max<std::int64_t>(0, cx - 1); x <= std::min(g - 1, cx + 1); ++x)
        for (auto k = cell_ptr[x + g * y]; k < cell_ptr[x + g * y + 1]; ++k) {
          const std::int64_t j = in_cell[k];
          if (j == i) continue;
          // (i, j) and (j, i) compute the same bits: the differences only change sign.
          const double dx = pts[i].x - pts[j].x, dy = pts[i].y - pts[j].y;
          const double d2 = dx * dx + dy * dy;
          // Clamped so that a distance rounding to the radius still gives a non-zero value.
          if (d2 < r2) row.emplace_back(j, std::max(0x1.0p-52, 1.0 - std::sqrt(d2) / radius));
        }
    std::sort(row.begin(), row.end());
    for (const auto& [j, v] : row) w.add(j, v);
    w.end_row();
  }
  return w.finish();
}

Csr64 random_geometric(std::int64_t n, double radius, std::uint64_t seed) {
  return geometric_graph(geometric_points(n, seed), radius);
}

}  // namespace sparsetune::gen
