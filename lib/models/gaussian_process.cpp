#include "models/gaussian_process.hpp"

#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "core/error.hpp"

namespace sparsetune::models {

double GaussianProcess::kernel(const std::vector<double>& a, const std::vector<double>& b) const {
  double d2 = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d2 += (a[i] - b[i]) * (a[i] - b[i]);
  return std::exp(-0.5 * d2 / (length_ * length_));
}

double GaussianProcess::factorise() {
  const std::size_t n = x_.size();
  chol_.assign(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      double s = kernel(x_[i], x_[j]) + (i == j ? noise_ : 0.0);
      for (std::size_t k = 0; k < j; ++k) s -= chol_[i * n + k] * chol_[j * n + k];
      if (i == j) {
        if (s <= 0) return -std::numeric_limits<double>::infinity();
        chol_[i * n + i] = std::sqrt(s);
      } else {
        chol_[i * n + j] = s / chol_[j * n + j];
      }
    }
  // alpha = L^-T L^-1 y
  alpha_ = y_;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < i; ++k) alpha_[i] -= chol_[i * n + k] * alpha_[k];
    alpha_[i] /= chol_[i * n + i];
  }
  double fit = 0, logdet = 0;
  for (std::size_t i = 0; i < n; ++i)
    fit += alpha_[i] * alpha_[i], logdet += std::log(chol_[i * n + i]);
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t k = i + 1; k < n; ++k) alpha_[i] -= chol_[k * n + i] * alpha_[k];
    alpha_[i] /= chol_[i * n + i];
  }
  return -0.5 * fit - logdet;
}

void GaussianProcess::fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y) {
  if (x.empty() || x.size() != y.size())
    throw Error("Gaussian process: " + std::to_string(x.size()) + " points and " +
                std::to_string(y.size()) + " values");
  for (const auto& p : x)
    if (p.size() != x[0].size()) throw Error("Gaussian process: points of different dimensions");
  x_ = x;
  const double n = static_cast<double>(y.size());
  mean_ = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double var = 0;
  for (double v : y) var += (v - mean_) * (v - mean_);
  scale_ = var > 0 ? std::sqrt(var / n) : 1.0;
  y_.resize(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) y_[i] = (y[i] - mean_) / scale_;
  // The length scale of the largest marginal likelihood (the data live in the unit cube).
  double best = -std::numeric_limits<double>::infinity(), best_length = 0.3;
  for (double l : {0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.8, 1.2}) {
    length_ = l;
    const double ll = factorise();
    if (ll > best) best = ll, best_length = l;
  }
  length_ = best_length;
  if (!std::isfinite(factorise())) {
    noise_ = 1e-3;  // duplicate points: more noise makes the matrix definite
    factorise();
  }
}

GaussianProcess::Prediction GaussianProcess::predict(const std::vector<double>& at) const {
  const std::size_t n = x_.size();
  std::vector<double> k(n);
  for (std::size_t i = 0; i < n; ++i) k[i] = kernel(at, x_[i]);
  double mean = 0;
  for (std::size_t i = 0; i < n; ++i) mean += k[i] * alpha_[i];
  // v = L^-1 k; variance = 1 - v·v
  std::vector<double> v = k;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < i; ++j) v[i] -= chol_[i * n + j] * v[j];
    v[i] /= chol_[i * n + i];
  }
  double var = 1.0;
  for (double e : v) var -= e * e;
  return {mean_ + scale_ * mean, scale_ * std::sqrt(std::max(var, 0.0))};
}

double expected_improvement(const GaussianProcess::Prediction& p, double best, double xi) {
  const double gain = best - p.mean - xi;
  if (p.sd <= 1e-12) return std::max(gain, 0.0);
  const double z = gain / p.sd;
  const double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
  const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
  return gain * cdf + p.sd * pdf;
}

}  // namespace sparsetune::models
