#include "gen/random_graphs.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "gen/assemble.hpp"
#include "gen/rng.hpp"

namespace sparsetune::gen {

namespace {

constexpr std::int64_t kMaxDim = (std::int64_t{1} << 31) - 1;

void check_dim(std::int64_t v, const char* kind, const char* name) {
  if (v < 1 || v > kMaxDim)
    throw Error(std::string(kind) + ": " + name + " must be in [1, 2^31 - 1], got " +
                std::to_string(v));
}

}  // namespace

Csr64 erdos_renyi(const ErdosRenyiParams& p, std::uint64_t seed) {
  check_dim(p.n, "erdos", "n");
  if (!(p.p >= 0.0 && p.p <= 1.0))
    throw Error("erdos: p must be in [0, 1], got " + std::to_string(p.p));
  const double n = static_cast<double>(p.n);
  check_entry_budget(n * (p.symmetric ? n - 1 : n) * p.p, "erdos", n, p.symmetric ? 32 : 16);
  Rng rng(seed);
  const GeometricSkip skip(p.p);
  // Symmetric: draw the strict upper triangle row by row, then mirror it.
  RowWriter w(p.n, p.n, static_cast<std::int64_t>(n * n * p.p * (p.symmetric ? 0.5 : 1.0)));
  for (std::int64_t i = 0; i < p.n; ++i) {
    std::int64_t j = (p.symmetric ? i + 1 : 0) + skip.next(rng, p.n);
    while (j < p.n) {
      w.add(j, rng.uniform_pos());
      j += 1 + skip.next(rng, p.n);
    }
    w.end_row();
  }
  Csr64 a = w.finish();
  return p.symmetric ? mirror_upper(a) : a;
}

void power_law_moments(const PowerLawParams& p, double& mean, double& variance) {
  const std::int64_t cols = p.cols > 0 ? p.cols : p.n;
  const std::int64_t hi = p.max_length > 0 ? p.max_length : cols;
  double sum = 0.0, s1 = 0.0, s2 = 0.0;
  for (std::int64_t k = p.min_length; k <= hi; ++k) {
    const double w = det_pow(static_cast<double>(k), -p.exponent);
    sum += w;
    s1 += w * k;
    s2 += w * k * static_cast<double>(k);
  }
  mean = s1 / sum;
  variance = s2 / sum - mean * mean;
}

Csr64 power_law(const PowerLawParams& p, std::uint64_t seed) {
  check_dim(p.n, "powerlaw", "n");
  const std::int64_t cols = p.cols > 0 ? p.cols : p.n;
  check_dim(cols, "powerlaw", "cols");
  if (!(p.exponent >= 0.0 && p.exponent <= 100.0))
    throw Error("powerlaw: exponent must be in [0, 100], got " + std::to_string(p.exponent));
  Rng rng(seed);
  std::vector<double> expected;  // Chung–Lu expected length of each row
  std::int64_t lo = 0;
  double mean = 0.0;
  if (p.degree > 0.0) {
    if (!(p.exponent > 1.0))
      throw Error("powerlaw: exponent must be above 1 with degree, got " +
                  std::to_string(p.exponent));
    if (!(p.degree <= static_cast<double>(cols)))
      throw Error("powerlaw: degree must be at most cols (" + std::to_string(cols) + "), got " +
                  std::to_string(p.degree));
    mean = p.degree;
    check_entry_budget(static_cast<double>(p.n) * mean, "powerlaw", static_cast<double>(p.n));
    const double gamma = 1.0 / (p.exponent - 1.0);
    std::vector<double> w(p.n);
    double sum = 0.0;
    for (std::int64_t i = 0; i < p.n; ++i)
      sum += w[i] = det_pow(static_cast<double>(i + 1), -gamma);
    const double scale = static_cast<double>(p.n) * p.degree / sum;
    const auto perm = random_permutation(p.n, rng);
    expected.resize(p.n);
    for (std::int64_t i = 0; i < p.n; ++i)
      expected[i] = std::min(static_cast<double>(cols), scale * w[perm[i]]);
  } else {
    const std::int64_t hi = p.max_length > 0 ? p.max_length : cols;
    if (p.min_length < 1 || p.min_length > cols)
      throw Error("powerlaw: min must be in [1, cols], got " + std::to_string(p.min_length));
    if (hi < p.min_length || hi > cols)
      throw Error("powerlaw: max must be in [min, cols], got " + std::to_string(hi));
    lo = p.min_length;
    // The length table costs 8 bytes per possible length, counted like rows.
    check_entry_budget(0, "powerlaw", static_cast<double>(p.n) + static_cast<double>(hi - lo));
    std::vector<double> weights(hi - lo + 1);
    double sum = 0.0, first = 0.0;
    for (std::int64_t k = lo; k <= hi; ++k) {
      weights[k - lo] = det_pow(static_cast<double>(k), -p.exponent);
      sum += weights[k - lo];
      first += weights[k - lo] * static_cast<double>(k);
    }
    mean = first / sum;
    check_entry_budget(static_cast<double>(p.n) * mean, "powerlaw", static_cast<double>(p.n));
    const DiscreteSampler length(weights);
    expected.resize(p.n);
    for (auto& e : expected) e = static_cast<double>(lo + length(rng));
  }
  std::vector<char> mark(cols, 0);
  std::vector<std::int64_t> picked;
  RowWriter out(p.n, cols, static_cast<std::int64_t>(static_cast<double>(p.n) * mean * 1.01));
  for (std::int64_t i = 0; i < p.n; ++i) {
    const double e = expected[i];
    auto k = static_cast<std::int64_t>(e);  // whole lengths pass through unchanged
    if (rng.uniform() < e - static_cast<double>(k)) ++k;
    sample_distinct(k, cols, rng, mark, picked);
    for (auto c : picked) out.add(c, rng.uniform_pos());
    out.end_row();
  }
  return out.finish();
}

}  // namespace sparsetune::gen
