#include "gen/kronecker.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "checks.hpp"
#include "core/error.hpp"

using namespace sparsetune;
using namespace sparsetune::gen;

namespace {
KroneckerParams scale12() {
  KroneckerParams p;
  p.scale = 12;
  p.permute = false;
  return p;
}
}  // namespace

TEST_CASE("R-MAT quadrant fractions match A, B, C, D at every level", "[gen][kron]") {
  auto p = scale12();
  p.a = 0.5;
  p.b = 0.2;
  p.c = 0.1;  // d = 0.2
  const auto e = kronecker_edges(p, 1);
  const std::int64_t m = e.nnz();
  REQUIRE(m == 16 * 4096);
  // Each edge makes one independent quadrant choice per level: m * scale Bernoulli samples
  // per quadrant, so the standard deviation of a fraction is sqrt(q (1 - q) / (m * scale)).
  double count[4] = {0, 0, 0, 0};
  double top[4] = {0, 0, 0, 0};
  for (std::int64_t k = 0; k < m; ++k) {
    REQUIRE(e.row[k] >= 0);
    REQUIRE(e.row[k] < 4096);
    REQUIRE(e.col[k] >= 0);
    REQUIRE(e.col[k] < 4096);
    for (int level = 0; level < 12; ++level) {
      const int rb = (e.row[k] >> level) & 1, cb = (e.col[k] >> level) & 1;
      count[2 * rb + cb] += 1;
    }
    ++top[2 * (e.row[k] >= 2048) + (e.col[k] >= 2048)];
  }
  const double want[4] = {0.5, 0.2, 0.1, 0.2};
  const double samples = static_cast<double>(m) * 12;
  for (int q = 0; q < 4; ++q) {
    INFO("quadrant " << q);
    CHECK(std::abs(count[q] / samples - want[q]) <
          5 * std::sqrt(want[q] * (1 - want[q]) / samples));
    CHECK(std::abs(top[q] / m - want[q]) < 5 * std::sqrt(want[q] * (1 - want[q]) / m));
  }
}

TEST_CASE("Kronecker adjacency merges repeats and keeps what the edge list holds", "[gen][kron]") {
  const auto p = scale12();
  const auto e = kronecker_edges(p, 2);
  const auto a = kronecker(p, 2);
  gen_test::require_well_formed(a);
  CHECK(a.rows == 4096);
  CHECK(a.nnz() <= e.nnz());
  CHECK(a.nnz() > e.nnz() / 2);  // repeats are common in the dense corner, but not the rule
  // Every drawn edge is present, with the value of its first drawing.
  std::vector<char> found(e.nnz(), 0);
  for (std::int64_t k = 0; k < e.nnz(); ++k) {
    bool first = true;
    for (std::int64_t j = 0; j < k && first && k < 200; ++j)
      first = !(e.row[j] == e.row[k] && e.col[j] == e.col[k]);
    const double v = gen_test::value_at(a, e.row[k], e.col[k]);
    REQUIRE(v != 0.0);
    if (k < 200 && first) CHECK(v == e.val[k]);
  }
  for (double v : a.val) {
    REQUIRE(v > 0.0);
    REQUIRE(v <= 1.0);
  }
}

TEST_CASE("Kronecker options: self-loops, symmetry, permutation", "[gen][kron]") {
  auto p = scale12();
  p.self_loops = false;
  const auto a = kronecker(p, 3);
  for (std::int64_t r = 0; r < a.rows; ++r) REQUIRE(gen_test::value_at(a, r, r) == 0.0);

  p.symmetric = true;
  const auto s = kronecker(p, 3);
  gen_test::require_well_formed(s);
  CHECK(gen_test::symmetric(s));

  // The permutation is drawn after the edges, so the permuted graph is a relabelling of the
  // unpermuted one: same number of entries and the same multiset of row lengths.
  auto q = scale12();
  const auto plain = kronecker(q, 4);
  q.permute = true;
  const auto perm = kronecker(q, 4);
  gen_test::require_well_formed(perm);
  CHECK(perm.nnz() == plain.nnz());
  std::vector<std::int64_t> lp, lq;
  for (std::int64_t r = 0; r < plain.rows; ++r) {
    lp.push_back(plain.row_length(r));
    lq.push_back(perm.row_length(r));
  }
  CHECK(lp != lq);
  std::sort(lp.begin(), lp.end());
  std::sort(lq.begin(), lq.end());
  CHECK(lp == lq);
  // Unpermuted R-MAT with a > d puts its heaviest row at the top; the permutation moves it.
  CHECK(plain.row_length(0) == lp.back());
}

TEST_CASE("Kronecker output is a function of the seed", "[gen][kron]") {
  KroneckerParams p;
  p.scale = 10;
  CHECK(gen_test::identical(kronecker(p, 5), kronecker(p, 5)));
  CHECK_FALSE(gen_test::identical(kronecker(p, 5), kronecker(p, 6)));
}

TEST_CASE("Kronecker parameters are validated by name", "[gen][kron]") {
  KroneckerParams p;
  p.scale = 0;
  CHECK_THROWS_WITH(kronecker(p, 1), Catch::Contains("scale"));
  p = KroneckerParams{};
  p.edge_factor = 0;
  CHECK_THROWS_WITH(kronecker(p, 1), Catch::Contains("edge_factor"));
  p = KroneckerParams{};
  p.b = -0.1;
  CHECK_THROWS_WITH(kronecker(p, 1), Catch::Contains("b must"));
  p = KroneckerParams{};
  p.a = 0.6;
  p.b = 0.3;
  p.c = 0.3;
  CHECK_THROWS_WITH(kronecker(p, 1), Catch::Contains("a + b + c"));
  p = KroneckerParams{};
  p.a = 0.25;
  p.b = 0.25;
  p.c = 0.25;
  CHECK_NOTHROW(validate(p));
}
