#include "gen/random_graphs.hpp"

#include <catch2/catch.hpp>
#include <cmath>

#include "checks.hpp"
#include "core/error.hpp"
#include "gen/rng.hpp"

using namespace sparsetune;
using namespace sparsetune::gen;

TEST_CASE("Erdos-Renyi entry count is binomial around n^2 p", "[gen][erdos]") {
  for (double p : {0.001, 0.02, 0.5}) {
    ErdosRenyiParams e{2000, p, false};
    const auto a = erdos_renyi(e, 1);
    gen_test::require_well_formed(a);
    const double N = 2000.0 * 2000.0;
    INFO("p = " << p);
    CHECK(std::abs(a.nnz() - N * p) < 5 * std::sqrt(N * p * (1 - p)));
    for (double v : a.val) REQUIRE(v <= 1.0);
  }
  // Diagonal entries occur in the non-symmetric model: about n p of them.
  const auto a = erdos_renyi({20000, 0.01, false}, 2);
  std::int64_t diag = 0;
  for (std::int64_t r = 0; r < a.rows; ++r) diag += gen_test::value_at(a, r, r) != 0.0;
  CHECK(std::abs(diag - 200) < 5 * std::sqrt(200.0));
}

TEST_CASE("symmetric Erdos-Renyi mirrors pairs and has no diagonal", "[gen][erdos]") {
  const auto a = erdos_renyi({3000, 0.004, true}, 3);
  gen_test::require_well_formed(a);
  CHECK(gen_test::symmetric(a));
  for (std::int64_t r = 0; r < a.rows; ++r) REQUIRE(gen_test::value_at(a, r, r) == 0.0);
  const double pairs = 3000.0 * 2999.0 / 2;
  CHECK(std::abs(a.nnz() / 2 - pairs * 0.004) < 5 * std::sqrt(pairs * 0.004 * 0.996));
}

TEST_CASE("Erdos-Renyi edge cases and determinism", "[gen][erdos]") {
  CHECK(erdos_renyi({50, 0.0, false}, 1).nnz() == 0);
  CHECK(erdos_renyi({50, 1.0, false}, 1).nnz() == 2500);
  CHECK(erdos_renyi({50, 1.0, true}, 1).nnz() == 50 * 49);
  CHECK(
      gen_test::identical(erdos_renyi({500, 0.01, false}, 9), erdos_renyi({500, 0.01, false}, 9)));
  CHECK_FALSE(
      gen_test::identical(erdos_renyi({500, 0.01, false}, 9), erdos_renyi({500, 0.01, false}, 10)));
  CHECK_THROWS_WITH(erdos_renyi({0, 0.1, false}, 1), Catch::Contains("n must"));
  CHECK_THROWS_WITH(erdos_renyi({10, 1.5, false}, 1), Catch::Contains("p must"));
  CHECK_THROWS_WITH(erdos_renyi({2000000000, 0.5, false}, 1), Catch::Contains("limit"));
}

TEST_CASE("independent power-law lengths follow P(k) ~ k^-a on [min, max]", "[gen][powerlaw]") {
  PowerLawParams p;
  p.n = 20000;
  p.cols = 5000;
  p.exponent = 2.2;
  p.min_length = 2;
  p.max_length = 400;
  const auto a = power_law(p, 1);
  gen_test::require_well_formed(a);
  CHECK(a.cols == 5000);
  double mean = 0, var = 0;
  power_law_moments(p, mean, var);
  // Hand-computable anchor: P(min) = 2^-2.2 / sum_{k=2}^{400} k^-2.2.
  double z = 0;
  for (int k = 2; k <= 400; ++k) z += std::pow(k, -2.2);
  const double p_min = std::pow(2, -2.2) / z;
  double sum = 0;
  std::int64_t at_min = 0;
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const auto len = a.row_length(r);
    REQUIRE(len >= 2);
    REQUIRE(len <= 400);
    sum += static_cast<double>(len);
    at_min += len == 2;
  }
  const double n = static_cast<double>(p.n);
  // The sample mean of n independent lengths has standard deviation sqrt(var / n).
  CHECK(std::abs(sum / n - mean) < 5 * std::sqrt(var / n));
  CHECK(std::abs(at_min - n * p_min) < 5 * std::sqrt(n * p_min * (1 - p_min)));
  // Columns are uniform: the left half of the columns holds about half of the entries.
  std::int64_t left = 0;
  for (auto c : a.col_idx) left += c < 2500;
  CHECK(std::abs(left - a.nnz() / 2.0) < 5 * std::sqrt(a.nnz() * 0.25));
}

TEST_CASE("Chung-Lu power law reaches the asked mean and a heavy head", "[gen][powerlaw]") {
  PowerLawParams p;
  p.n = 50000;
  p.exponent = 2.5;
  p.degree = 12;
  const auto a = power_law(p, 2);
  gen_test::require_well_formed(a);
  // Lengths are fixed expectations rounded up with probability equal to the fraction: each
  // row's variance is at most 1/4, so the mean has standard deviation <= 0.5 / sqrt(n).
  const double mean = static_cast<double>(a.nnz()) / p.n;
  CHECK(std::abs(mean - 12.0) < 5 * 0.5 / std::sqrt(double(p.n)));
  // Heaviest expected row: 12 n / sum_i (i+1)^(-2/3), times 1.
  double z = 0;
  for (int i = 1; i <= p.n; ++i) z += std::pow(i, -1.0 / 1.5);
  const double head = 12.0 * p.n / z;
  std::int64_t longest = 0;
  for (std::int64_t r = 0; r < a.rows; ++r) longest = std::max(longest, a.row_length(r));
  CHECK(std::abs(static_cast<double>(longest) - head) <= 1.0);
  CHECK(a.row_length(0) < longest);  // rows are shuffled (the head row is not row 0 here)
}

TEST_CASE("power-law parameters are checked and the output is seeded", "[gen][powerlaw]") {
  PowerLawParams p;
  p.n = 1000;
  CHECK(gen_test::identical(power_law(p, 1), power_law(p, 1)));
  CHECK_FALSE(gen_test::identical(power_law(p, 1), power_law(p, 2)));
  p.min_length = 0;
  CHECK_THROWS_WITH(power_law(p, 1), Catch::Contains("min"));
  p.min_length = 5;
  p.max_length = 3;
  CHECK_THROWS_WITH(power_law(p, 1), Catch::Contains("max"));
  p = PowerLawParams{};
  p.degree = 5;
  p.exponent = 1.0;
  CHECK_THROWS_WITH(power_law(p, 1), Catch::Contains("exponent"));
  p.exponent = -1;
  p.degree = 0;
  CHECK_THROWS_WITH(power_law(p, 1), Catch::Contains("exponent"));
  // Rows as long as the matrix is wide are the dense rows.
  p = PowerLawParams{};
  p.n = 10;
  p.cols = 8;
  p.min_length = 8;
  const auto dense = power_law(p, 1);
  CHECK(dense.nnz() == 80);
}
