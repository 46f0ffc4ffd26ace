#include "search/crux_bo.hpp"

#include <cmath>
#include <random>
#include <string>

#include "core/error.hpp"
#include "models/gaussian_process.hpp"

namespace sparsetune::search {

namespace {

bool ok(double v) { return std::isfinite(v) && v > 0; }

bool same(CruxPoint a, CruxPoint b) {
  return std::abs(a.tau_c - b.tau_c) < 1e-9 && std::abs(a.tau_r - b.tau_r) < 1e-9;
}

}  // namespace

CruxBoResult minimize_crux(const std::function<double(CruxPoint)>& f, const CruxBoOptions& o) {
  if (o.max_evaluations < 1 || o.initial < 2 || !(o.grid > 0 && o.grid <= 0.5))
    throw Error("crux search: needs max_evaluations >= 1, initial >= 2 and 0 < grid <= 0.5");
  CruxBoResult r;
  std::mt19937_64 rng(o.seed);
  auto tried = [&](CruxPoint p) {
    for (const auto& t : r.tried)
      if (same(t, p)) return true;
    return false;
  };
  auto evaluate = [&](CruxPoint p) {
    const double v = f(p);
    r.tried.push_back(p);
    r.values.push_back(v);
    if (!ok(v)) {
      ++r.failed;
    } else if (r.best_value == 0 || v < r.best_value) {
      r.best_value = v;
      r.best = p;
    }
  };

  // The extremes first (either can be a matrix's answer), then points spread over the triangle.
  std::vector<CruxPoint> start{{0, 0}, {1, 1}, {0.5, 0.25}, {0.8, 0.6}, {0.3, 0.1}, {0.9, 0.3}};
  std::uniform_real_distribution<double> u(0, 1);
  while (static_cast<int>(start.size()) < o.initial) {
    const double a = u(rng), b = u(rng);
    start.push_back({std::max(a, b), std::min(a, b)});
  }
  start.resize(o.initial);
  start.insert(start.begin(), o.first.begin(), o.first.end());
  const auto stopped = [&] { return o.stop && o.stop(); };
  for (const auto& p : start)
    if (static_cast<int>(r.tried.size()) < o.max_evaluations && !stopped() && !tried(p))
      evaluate(p);

  // Candidates: a grid of the triangle and as many random points in it.
  std::vector<CruxPoint> cands;
  const int steps = static_cast<int>(std::round(1.0 / o.grid));
  for (int i = 0; i <= steps; ++i)
    for (int j = 0; j <= i; ++j) cands.push_back({1.0 * i / steps, 1.0 * j / steps});
  const std::size_t grid_points = cands.size();
  for (std::size_t k = 0; k < grid_points; ++k) {
    const double a = u(rng), b = u(rng);
    cands.push_back({std::max(a, b), std::min(a, b)});
  }

  models::GaussianProcess gp;
  while (static_cast<int>(r.tried.size()) < o.max_evaluations && !stopped()) {
    std::vector<std::vector<double>> xs;
    std::vector<double> ys;
    for (std::size_t i = 0; i < r.tried.size(); ++i)
      if (ok(r.values[i]))
        xs.push_back({r.tried[i].tau_c, r.tried[i].tau_r}), ys.push_back(std::log(r.values[i]));
    CruxPoint next{-1, -1};
    if (xs.size() >= 2) {
      gp.fit(xs, ys);
      const double best = std::log(r.best_value);
      double best_ei = -1, best_sd = -1;
      CruxPoint widest{-1, -1};
      for (const auto& c : cands) {
        if (tried(c)) continue;
        const auto p = gp.predict({c.tau_c, c.tau_r});
        const double ei = models::expected_improvement(p, best, o.xi);
        if (ei > best_ei) best_ei = ei, next = c;
        if (p.sd > best_sd) best_sd = p.sd, widest = c;
      }
      // Nothing left to gain by the model's account: learn where it knows least.
      if (best_ei <= 1e-12) next = widest;
    } else {
      // Too few successes to model: a random untried point.
      for (int k = 0; k < 1000 && (next.tau_c < 0 || tried(next)); ++k)
        next = cands[rng() % cands.size()];
    }
    if (next.tau_c < 0 || tried(next)) break;  // the candidates are exhausted
    evaluate(next);
  }
  return r;
}

}  // namespace sparsetune::search
