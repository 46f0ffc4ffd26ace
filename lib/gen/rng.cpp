#include "gen/rng.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace sparsetune::gen {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

namespace {
std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

Rng::Rng(std::uint64_t seed) {
  // splitmix64 never yields four zero words in a row, so the state is always valid.
  for (auto& w : s_) w = splitmix64(seed);
}

std::uint64_t Rng::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

double Rng::uniform_pos() { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }

std::uint64_t Rng::below(std::uint64_t bound) {
  // Reject the lowest 2^64 mod bound values so that every residue is equally likely.
  const std::uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    const std::uint64_t r = next();
    if (r >= threshold) return r % bound;
  }
}

std::int64_t Rng::between(std::int64_t lo, std::int64_t hi) {
  const auto span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) + 1;
  if (span == 0) return static_cast<std::int64_t>(next());  // the whole 64-bit range
  return lo + static_cast<std::int64_t>(below(span));
}

bool Rng::bernoulli(double p) { return uniform() < p; }

GeometricSkip::GeometricSkip(double p) : p_(p), log_q_(0.0) {
  if (p > 0.0 && p < 1.0) {
    if (p < 1e-3) {
      // log(1 - p) by its series: forming 1 - p first would lose the low digits of p.
      log_q_ = -(p + p * p / 2 + p * p * p / 3 + p * p * p * p / 4 + p * p * p * p * p / 5);
    } else {
      log_q_ = det_log(1.0 - p);
    }
  }
}

std::int64_t GeometricSkip::next(Rng& rng, std::int64_t cap) const {
  if (p_ >= 1.0) return 0;
  if (p_ <= 0.0) return cap;
  const double x = det_log(rng.uniform_pos()) / log_q_;
  if (!(x < static_cast<double>(cap))) return cap;
  return static_cast<std::int64_t>(x);  // truncation == floor for x >= 0
}

std::vector<std::int64_t> random_permutation(std::int64_t n, Rng& rng) {
  std::vector<std::int64_t> p(n);
  for (std::int64_t i = 0; i < n; ++i) p[i] = i;
  for (std::int64_t i = n - 1; i > 0; --i)
    std::swap(p[i], p[static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(i) + 1))]);
  return p;
}

void sample_distinct(std::int64_t k, std::int64_t m, Rng& rng, std::vector<char>& mark,
                     std::vector<std::int64_t>& out) {
  out.clear();
  for (std::int64_t j = m - k; j < m; ++j) {
    auto t = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(j) + 1));
    if (mark[t]) t = j;  // j itself cannot have been taken yet
    mark[t] = 1;
    out.push_back(t);
  }
  for (auto v : out) mark[v] = 0;
  std::sort(out.begin(), out.end());
}

DiscreteSampler::DiscreteSampler(const std::vector<double>& weights) {
  cdf_.resize(weights.size());
  double sum = 0.0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (!(weights[i] >= 0.0)) throw Error("sampling weights must be non-negative");
    sum += weights[i];
    cdf_[i] = sum;
  }
  if (!(sum > 0.0) || !std::isfinite(sum)) throw Error("sampling weights must have a positive sum");
  for (auto& c : cdf_) c /= sum;
  // The last non-zero weight closes the table at exactly 1 so that every draw lands.
  for (auto i = cdf_.size(); i-- > 0;) {
    cdf_[i] = 1.0;
    if (weights[i] > 0.0) break;
  }
}

std::int64_t DiscreteSampler::operator()(Rng& rng) const {
  const double u = rng.uniform();
  return static_cast<std::int64_t>(std::upper_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin());
}

double DiscreteSampler::probability(std::int64_t i) const {
  return cdf_[i] - (i > 0 ? cdf_[i - 1] : 0.0);
}

namespace {
constexpr double kLn2 = 0.69314718055994530942;
}

double det_log(double x) {
  if (!(x > 0.0)) return x == 0.0 ? -HUGE_VAL : NAN;
  if (std::isinf(x)) return x;
  int e = 0;
  double m = std::frexp(x, &e);  // exact: x = m * 2^e, m in [0.5, 1)
  if (m < 0.70710678118654752440) {
    m *= 2.0;
    --e;
  }
  // log(m) = 2 atanh(s) with s = (m-1)/(m+1), |s| <= 0.172: 13 odd terms reach double precision.
  const double s = (m - 1.0) / (m + 1.0);
  const double z = s * s;
  double poly = 0.0;
  for (int k = 12; k >= 0; --k) poly = poly * z + 1.0 / (2 * k + 1);
  return e * kLn2 + 2.0 * s * poly;
}

double det_exp(double x) {
  if (std::isnan(x)) return x;
  if (x > 709.8) return HUGE_VAL;
  if (x < -745.2) return 0.0;
  const double k = std::floor(x / kLn2 + 0.5);
  const double r = x - k * kLn2;  // |r| <= ln2 / 2
  double sum = 1.0, term = 1.0;
  for (int n = 1; n <= 17; ++n) {
    term *= r / n;
    sum += term;
  }
  return std::ldexp(sum, static_cast<int>(k));
}

double det_pow(double x, double y) {
  if (y == 0.0 || x == 1.0) return 1.0;
  return det_exp(y * det_log(x));
}

}  // namespace sparsetune::gen
