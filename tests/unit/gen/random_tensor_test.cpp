#include "gen/random_tensor.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "core/error.hpp"

using namespace sparsetune;
using namespace sparsetune::gen;

namespace {
void require_sorted_distinct(const SparseTensor& t) {
  const int order = t.order();
  REQUIRE(static_cast<int>(t.idx.size()) == order);
  for (int m = 0; m < order; ++m) REQUIRE(static_cast<std::int64_t>(t.idx[m].size()) == t.nnz());
  for (std::int64_t e = 0; e < t.nnz(); ++e) {
    for (int m = 0; m < order; ++m) {
      REQUIRE(t.idx[m][e] >= 0);
      REQUIRE(t.idx[m][e] < t.dims[m]);
    }
    REQUIRE(t.val[e] > 0.0);
    REQUIRE(t.val[e] <= 1.0);
    if (e == 0) continue;
    // Strictly increasing lexicographically: sorted and free of repeated coordinates.
    int m = 0;
    while (m < order && t.idx[m][e] == t.idx[m][e - 1]) ++m;
    REQUIRE(m < order);
    REQUIRE(t.idx[m][e] > t.idx[m][e - 1]);
  }
}
}  // namespace

TEST_CASE("random tensors have exactly nnz distinct sorted coordinates", "[gen][tensor]") {
  const auto t = random_tensor({{30, 40, 50}, 20000, 0.0}, 1);
  CHECK(t.dims == std::vector<std::int64_t>{30, 40, 50});
  CHECK(t.nnz() == 20000);
  require_sorted_distinct(t);
  // Uniform mode 0: each of the 30 slices holds about 1/30 of the entries.
  std::vector<double> per(30, 0);
  for (auto i : t.idx[0]) ++per[i];
  for (double c : per) CHECK(std::abs(c - 20000.0 / 30) < 5 * std::sqrt(20000.0 / 30));

  // A full tensor and an empty one.
  const auto full = random_tensor({{4, 3, 2}, 24, 0.0}, 2);
  require_sorted_distinct(full);
  CHECK(full.nnz() == 24);
  CHECK(random_tensor({{4, 3}, 0, 0.0}, 2).nnz() == 0);
  const auto order4 = random_tensor({{5, 6, 7, 8}, 500, 0.5}, 3);
  require_sorted_distinct(order4);
}

TEST_CASE("skew piles entries into the first slices as a Zipf law says", "[gen][tensor]") {
  // Slices are large (4 10^4 cells) next to their expected load, so rejected repeats are rare.
  const double s = 1.2;
  const auto t = random_tensor({{50, 200, 200}, 4000, s}, 4);
  require_sorted_distinct(t);
  double z = 0;
  for (int i = 1; i <= 50; ++i) z += std::pow(i, -s);
  std::vector<double> per(50, 0);
  for (auto i : t.idx[0]) ++per[i];
  for (int i : {0, 1, 9}) {
    const double q = std::pow(i + 1, -s) / z;
    INFO("slice " << i);
    CHECK(std::abs(per[i] - 4000 * q) < 5 * std::sqrt(4000 * q * (1 - q)) + 4000 * 0.005);
  }
  CHECK(per[0] > per[1]);
  CHECK(per[1] > per[9]);
}

TEST_CASE("random tensors are seeded and their parameters checked", "[gen][tensor]") {
  const RandomTensorParams p{{20, 20, 20}, 1000, 0.7};
  const auto a = random_tensor(p, 5), b = random_tensor(p, 5), c = random_tensor(p, 6);
  CHECK(a.idx == b.idx);
  CHECK(a.val == b.val);
  CHECK(a.idx != c.idx);
  CHECK_THROWS_WITH(random_tensor({{10, 10}, 101, 0.0}, 1),
                    Catch::Contains("nnz 101 does not fit") && Catch::Contains("[0, 100]"));
  CHECK_THROWS_WITH(random_tensor({{10, 0}, 10, 0.0}, 1), Catch::Contains("dims"));
  CHECK_THROWS_WITH(random_tensor({{}, 10, 0.0}, 1), Catch::Contains("dims"));
  CHECK_THROWS_WITH(random_tensor({{10, 10}, 10, -1.0}, 1), Catch::Contains("skew"));
  // Skew so strong that slice 0 (10 cells) would need far more than it holds: refused, not
  // looped on forever.
  CHECK_THROWS_WITH(random_tensor({{1000, 10}, 5000, 8.0}, 1),
                    Catch::Contains("lower nnz or skew"));
}
