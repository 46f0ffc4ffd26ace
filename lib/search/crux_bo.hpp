#pragma once
// Bayesian optimisation of MatXtract's crux (TACO'26 §5, Alg. 3 line 4): the (τc, τr) that
// minimises a matrix's SpMV time, over 0 ≤ τr ≤ τc ≤ 1, in a handful of evaluations (each one a
// format build, a compile and a GPU measurement). A Gaussian process models log time; the next
// point maximises expected improvement over a grid of the triangle. Its answers are the crux
// labels the crux predictor learns from, and a search strategy of tune.
#include <cstdint>
#include <functional>
#include <vector>

namespace sparsetune::search {

struct CruxPoint {
  double tau_c = 0, tau_r = 0;
};

struct CruxBoOptions {
  int max_evaluations = 20;
  int initial = 6;     // the first points, before the surrogate chooses (at least 2)
  double xi = 0.01;    // the improvement of log time an expected improvement must exceed
  double grid = 0.02;  // spacing of the candidate grid over the triangle
  std::uint64_t seed = 1;
  // Tried before the initial points (a predicted crux: the search starts from it); they count
  // among the evaluations.
  std::vector<CruxPoint> first;
  std::function<bool()> stop;  // asked before each evaluation: true ends the search there
};

struct CruxBoResult {
  std::vector<CruxPoint> tried;  // in evaluation order
  std::vector<double> values;    // f at each (non-finite or <= 0: failed)
  CruxPoint best;
  double best_value = 0;  // 0 when every evaluation failed
  int failed = 0;
};

// Minimises f (a time: lower is better; a non-finite or non-positive value is a failed
// evaluation, left out of the model and never tried again) in at most max_evaluations calls.
// The initial points are all cold (0, 0), all hot (1, 1) and spread inside the triangle.
CruxBoResult minimize_crux(const std::function<double(CruxPoint)>& f, const CruxBoOptions& o = {});

}  // namespace sparsetune::search
