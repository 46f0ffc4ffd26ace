#include "gen/rng.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

using namespace sparsetune::gen;

TEST_CASE("splitmix64 matches its published first output for seed 0", "[gen][rng]") {
  std::uint64_t s = 0;
  CHECK(splitmix64(s) == 0xe220a8397b1dcdafULL);
  CHECK(splitmix64(s) == 0x6e789e6aa1b965f4ULL);
}

TEST_CASE("Rng streams depend only on the seed", "[gen][rng]") {
  Rng a(42), b(42), c(43);
  std::vector<std::uint64_t> xa, xb, xc;
  for (int i = 0; i < 100; ++i) {
    xa.push_back(a.next());
    xb.push_back(b.next());
    xc.push_back(c.next());
  }
  CHECK(xa == xb);
  CHECK(xa != xc);
}

TEST_CASE("uniform doubles stay in their intervals and fill them evenly", "[gen][rng]") {
  Rng r(7);
  const int draws = 100000, bins = 10;
  std::vector<int> count(bins, 0);
  for (int i = 0; i < draws; ++i) {
    const double u = r.uniform(), v = r.uniform_pos();
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    REQUIRE(v > 0.0);
    REQUIRE(v <= 1.0);
    ++count[static_cast<int>(u * bins)];
  }
  // Chi-square with 9 degrees of freedom: 30 is far beyond its 99.9% point (27.9).
  double chi2 = 0.0;
  for (int c : count) chi2 += (c - draws / bins) * (c - draws / bins) / double(draws / bins);
  CHECK(chi2 < 30.0);
}

TEST_CASE("below() is unbiased for a bound that does not divide 2^64", "[gen][rng]") {
  Rng r(3);
  const int draws = 60000;
  std::vector<int> count(3, 0);
  for (int i = 0; i < draws; ++i) {
    const auto v = r.below(3);
    REQUIRE(v < 3);
    ++count[v];
  }
  for (int c : count) CHECK(std::abs(c - draws / 3) < 5 * std::sqrt(draws * (1.0 / 3) * (2.0 / 3)));
  CHECK(r.below(1) == 0);
  for (int i = 0; i < 100; ++i) {
    const auto v = r.between(-5, 5);
    REQUIRE(v >= -5);
    REQUIRE(v <= 5);
  }
}

TEST_CASE("det_log, det_exp and det_pow agree with libm to a few ulps", "[gen][rng]") {
  for (double x : {1e-300, 1e-10, 0.001, 0.3, 0.7071, 1.0, 1.5, 2.0, 10.0, 12345.678, 1e300}) {
    INFO("x = " << x);
    CHECK(std::abs(det_log(x) - std::log(x)) <= 4e-16 * std::max(1.0, std::abs(std::log(x))));
  }
  for (double x : {-700.0, -20.0, -1.0, -1e-8, 0.0, 0.5, 1.0, 3.0, 50.0, 700.0}) {
    INFO("x = " << x);
    CHECK(std::abs(det_exp(x) - std::exp(x)) <= 1e-15 * std::exp(x) * std::max(1.0, std::abs(x)));
  }
  CHECK(det_exp(-1000.0) == 0.0);
  CHECK(std::isinf(det_exp(1000.0)));
  CHECK(std::abs(det_pow(2.0, 10.0) - 1024.0) < 1e-10);
  CHECK(std::abs(det_pow(1000.0, -2.5) - std::pow(1000.0, -2.5)) <
        1e-15 * std::pow(1000.0, -2.5) * 20);
}

TEST_CASE("geometric skips have the mean (1 - p) / p", "[gen][rng]") {
  Rng r(11);
  for (double p : {0.5, 0.05, 1e-4}) {
    const GeometricSkip skip(p);
    const int draws = 20000;
    double sum = 0.0;
    for (int i = 0; i < draws; ++i) sum += static_cast<double>(skip.next(r, std::int64_t{1} << 60));
    const double mean = (1 - p) / p, sd = std::sqrt(1 - p) / p;
    INFO("p = " << p);
    CHECK(std::abs(sum / draws - mean) < 5 * sd / std::sqrt(double(draws)));
  }
  CHECK(GeometricSkip(1.0).next(r, 10) == 0);
  CHECK(GeometricSkip(0.0).next(r, 10) == 10);
  CHECK(GeometricSkip(1e-12).next(r, 10) == 10);  // almost surely past the cap
}

TEST_CASE("sample_distinct draws distinct sorted values and leaves the scratch clean",
          "[gen][rng]") {
  Rng r(5);
  std::vector<char> mark(50, 0);
  std::vector<std::int64_t> out;
  std::vector<int> hits(50, 0);
  for (int k : {0, 1, 7, 25, 49, 50}) {
    sample_distinct(k, 50, r, mark, out);
    REQUIRE(static_cast<int>(out.size()) == k);
    REQUIRE(std::is_sorted(out.begin(), out.end()));
    REQUIRE(std::adjacent_find(out.begin(), out.end()) == out.end());
    for (auto v : out) {
      REQUIRE(v >= 0);
      REQUIRE(v < 50);
    }
    REQUIRE(std::count(mark.begin(), mark.end(), 1) == 0);
  }
  // Each value is picked with probability k / m = 0.2.
  const int rounds = 5000;
  for (int i = 0; i < rounds; ++i) {
    sample_distinct(10, 50, r, mark, out);
    for (auto v : out) ++hits[v];
  }
  const double sd = std::sqrt(rounds * 0.2 * 0.8);
  for (int h : hits) CHECK(std::abs(h - rounds * 0.2) < 5 * sd);
}

TEST_CASE("random_permutation is a permutation and the sampler follows its weights", "[gen][rng]") {
  Rng r(9);
  auto p = random_permutation(1000, r);
  std::vector<std::int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (std::int64_t i = 0; i < 1000; ++i) REQUIRE(sorted[i] == i);
  CHECK(p != sorted);

  const DiscreteSampler s({1.0, 0.0, 3.0, 0.0});
  CHECK(s.probability(0) == Approx(0.25));
  CHECK(s.probability(1) == 0.0);
  int count[4] = {0, 0, 0, 0};
  const int draws = 40000;
  for (int i = 0; i < draws; ++i) ++count[s(r)];
  CHECK(count[1] == 0);
  CHECK(count[3] == 0);
  CHECK(std::abs(count[0] - draws / 4) < 5 * std::sqrt(draws * 0.25 * 0.75));
  CHECK_THROWS(DiscreteSampler({0.0, 0.0}));
  CHECK_THROWS(DiscreteSampler({1.0, -1.0}));
}
