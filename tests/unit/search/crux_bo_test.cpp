// The crux search (Bayesian optimisation over 0 <= tau_r <= tau_c <= 1) on functions whose
// minimum is known: it stays in the triangle, never repeats a point, spends at most its budget,
// finds the minimum closely, and survives failed evaluations.
#include "search/crux_bo.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "core/error.hpp"

using namespace sparsetune;
using search::CruxPoint;

namespace {

// A time with its minimum, 10, at (0.7, 0.3), and an anisotropic bowl around it.
double bowl(CruxPoint p) {
  return 10.0 +
         50.0 * ((p.tau_c - 0.7) * (p.tau_c - 0.7) + 2.0 * (p.tau_r - 0.3) * (p.tau_r - 0.3));
}

void check_well_formed(const search::CruxBoResult& r, int budget) {
  REQUIRE(static_cast<int>(r.tried.size()) <= budget);
  REQUIRE(r.tried.size() == r.values.size());
  for (std::size_t i = 0; i < r.tried.size(); ++i) {
    const auto& p = r.tried[i];
    REQUIRE((0 <= p.tau_r && p.tau_r <= p.tau_c && p.tau_c <= 1));
    for (std::size_t j = 0; j < i; ++j)
      REQUIRE_FALSE((p.tau_c == r.tried[j].tau_c && p.tau_r == r.tried[j].tau_r));
  }
}

}  // namespace

TEST_CASE("the crux search finds an interior minimum in 20 evaluations", "[search][crux]") {
  int calls = 0;
  const auto r = search::minimize_crux([&](CruxPoint p) { return ++calls, bowl(p); });
  check_well_formed(r, 20);
  CHECK(calls == 20);
  CHECK(r.failed == 0);
  CHECK(r.best_value < 10.3);  // within 3 % of the minimum
  CHECK(std::abs(r.best.tau_c - 0.7) < 0.1);
  CHECK(std::abs(r.best.tau_r - 0.3) < 0.1);

  // The model, not luck: 20 random points of the triangle do worse on average (100 draws).
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  double random_best_sum = 0;
  for (int d = 0; d < 100; ++d) {
    double best = 1e30;
    for (int k = 0; k < 20; ++k) {
      const double a = u(rng), b = u(rng);
      best = std::min(best, bowl({std::max(a, b), std::min(a, b)}));
    }
    random_best_sum += best;
  }
  CHECK(r.best_value < random_best_sum / 100);

  // The same seed, the same points.
  const auto again = search::minimize_crux(bowl);
  REQUIRE(again.tried.size() == r.tried.size());
  for (std::size_t i = 0; i < r.tried.size(); ++i) CHECK(again.tried[i].tau_c == r.tried[i].tau_c);

  // A stop (a deadline) ends the search between evaluations, during the first points or after.
  for (int limit : {3, 9}) {
    int n = 0;
    search::CruxBoOptions o;
    o.stop = [&] { return n >= limit; };
    const auto cut = search::minimize_crux([&](CruxPoint p) { return ++n, bowl(p); }, o);
    CHECK(static_cast<int>(cut.tried.size()) == limit);
    CHECK(n == limit);
  }
}

TEST_CASE(
    "the crux search answers all cold or all hot when that is best, and survives "
    "failures",
    "[search][crux]") {
  // All cold is best: tried first.
  auto r = search::minimize_crux([](CruxPoint p) { return 5.0 + p.tau_c + p.tau_r; });
  CHECK(r.best.tau_c == 0.0);
  CHECK(r.best.tau_r == 0.0);
  // All hot is best.
  r = search::minimize_crux([](CruxPoint p) { return 7.0 - p.tau_c - p.tau_r; });
  CHECK(r.best.tau_c == 1.0);
  CHECK(r.best.tau_r == 1.0);

  // Evaluations failing in part of the triangle (e.g. a format that does not fit) are counted and
  // left out; the answer is a point that worked.
  search::CruxBoOptions o;
  o.max_evaluations = 15;
  r = search::minimize_crux([](CruxPoint p) { return p.tau_c > 0.85 ? std::nan("") : bowl(p); }, o);
  check_well_formed(r, 15);
  CHECK(r.failed >= 1);
  CHECK(r.best.tau_c <= 0.85);
  CHECK(r.best_value < 10.5);

  // Everything fails: no answer, and no endless loop.
  o.max_evaluations = 8;
  r = search::minimize_crux([](CruxPoint) { return -1.0; }, o);
  CHECK(r.failed == 8);
  CHECK(r.best_value == 0.0);

  o.initial = 1;
  CHECK_THROWS_AS(search::minimize_crux(bowl, o), Error);
}
