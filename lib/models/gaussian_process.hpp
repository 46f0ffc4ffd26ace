#pragma once
// A Gaussian-process regression surrogate for Bayesian optimisation over a few continuous
// parameters: a squared-exponential kernel with one length scale, its length scale chosen by the
// marginal likelihood over a fixed grid, a constant mean (the data's), a small noise term. Fit
// on tens of points (a Cholesky factorisation, O(n^3)); prediction gives mean and standard
// deviation.
#include <cstdint>
#include <vector>

namespace sparsetune::models {

class GaussianProcess {
 public:
  // Fits to points `x` (all of one dimension) and values `y`; throws Error when the sizes
  // disagree or there is no point. Values need not be normalised.
  void fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y);
  struct Prediction {
    double mean = 0, sd = 0;
  };
  Prediction predict(const std::vector<double>& at) const;
  double length_scale() const { return length_; }

 private:
  double kernel(const std::vector<double>& a, const std::vector<double>& b) const;
  // Factorises K + noise·I for the current length scale; returns the log marginal likelihood
  // (-inf when the matrix is not positive definite).
  double factorise();

  std::vector<std::vector<double>> x_;
  std::vector<double> y_;  // centred and scaled
  double mean_ = 0, scale_ = 1, length_ = 0.3, noise_ = 1e-6;
  std::vector<double> chol_;   // lower triangle, row-major n × n
  std::vector<double> alpha_;  // (K + noise I)^-1 y
};

// Expected improvement of a minimisation at a prediction, over the best value so far
// (`xi`: the margin an improvement must exceed).
double expected_improvement(const GaussianProcess::Prediction& p, double best, double xi);

}  // namespace sparsetune::models
