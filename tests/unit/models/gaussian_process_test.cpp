// The Gaussian-process surrogate of the crux search: it interpolates what it was fitted on, is
// unsure away from it, and expected improvement has its closed form.
#include "models/gaussian_process.hpp"

#include <catch2/catch.hpp>
#include <cmath>

#include "core/error.hpp"

using namespace sparsetune;

TEST_CASE("a Gaussian process interpolates its points and is unsure far from them", "[models]") {
  std::vector<std::vector<double>> x{{0.1, 0.1}, {0.5, 0.2}, {0.9, 0.4}, {0.4, 0.35}, {0.7, 0.6}};
  std::vector<double> y;
  for (const auto& p : x) y.push_back(std::sin(3 * p[0]) + p[1] * p[1]);
  models::GaussianProcess gp;
  gp.fit(x, y);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const auto p = gp.predict(x[i]);
    CHECK(p.mean == Approx(y[i]).margin(1e-2));
    CHECK(p.sd < 0.05);
  }
  // Far outside the points the prediction goes back to the mean of the data, with more doubt.
  const auto far = gp.predict({5.0, 5.0});
  double mean = 0;
  for (double v : y) mean += v / y.size();
  CHECK(far.mean == Approx(mean).margin(1e-6));
  CHECK(far.sd > 10 * gp.predict(x[0]).sd);

  // One value everywhere: that value, with no doubt at the points.
  gp.fit({{0.2, 0.1}, {0.6, 0.3}}, {3.0, 3.0});
  CHECK(gp.predict({0.4, 0.2}).mean == Approx(3.0));

  CHECK_THROWS_AS(gp.fit({}, {}), Error);
  CHECK_THROWS_AS(gp.fit({{0.1}, {0.2}}, {1.0}), Error);
  CHECK_THROWS_AS(gp.fit({{0.1}, {0.2, 0.3}}, {1.0, 2.0}), Error);
}

TEST_CASE("expected improvement, by its formula", "[models]") {
  // No doubt: the gain itself, or nothing.
  CHECK(models::expected_improvement({1.0, 0.0}, 2.0, 0.1) == Approx(0.9));
  CHECK(models::expected_improvement({3.0, 0.0}, 2.0, 0.0) == 0.0);
  // At the best value with doubt sd: sd * phi(0).
  CHECK(models::expected_improvement({2.0, 0.5}, 2.0, 0.0) == Approx(0.5 / std::sqrt(2 * M_PI)));
  // Gain g = 1, sd 1: g * Phi(1) + phi(1).
  const double expect = 0.8413447460685429 + std::exp(-0.5) / std::sqrt(2 * M_PI);
  CHECK(models::expected_improvement({1.0, 1.0}, 2.0, 0.0) == Approx(expect));
}
