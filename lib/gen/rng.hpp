#pragma once
// The one source of randomness of every generator: xoshiro256** seeded through splitmix64, with
// its own conversions to doubles and bounded integers. The standard distributions are not used
// because their output differs between standard libraries; these give the same stream anywhere.
#include <cstdint>
#include <vector>

namespace sparsetune::gen {

// splitmix64 step: advances `state` and returns the next output.
std::uint64_t splitmix64(std::uint64_t& state);

class Rng {
 public:
  explicit Rng(std::uint64_t seed);

  std::uint64_t next();                      // 64 uniform bits
  double uniform();                          // [0, 1), 53-bit resolution
  double uniform_pos();                      // (0, 1]: safe for logarithms and as a value
  std::uint64_t below(std::uint64_t bound);  // [0, bound), unbiased; bound > 0
  std::int64_t between(std::int64_t lo, std::int64_t hi);  // [lo, hi], inclusive
  bool bernoulli(double p);                                // true with probability p

 private:
  std::uint64_t s_[4];
};

// Skip sampling of Bernoulli(p) positions: next() is the number of failures before the next
// success, so visiting only the kept positions costs O(kept) instead of O(positions).
class GeometricSkip {
 public:
  explicit GeometricSkip(double p);  // p in [0, 1]
  // Gap to the next kept position, capped at `cap` (returned when the jump reaches it).
  std::int64_t next(Rng& rng, std::int64_t cap) const;

 private:
  double p_;
  double log_q_;  // log(1 - p), computed without cancellation for small p
};

// Fisher–Yates shuffle of 0..n-1.
std::vector<std::int64_t> random_permutation(std::int64_t n, Rng& rng);

// Draws k distinct values from [0, m) (Floyd's algorithm), returned sorted ascending.
// `mark` is scratch space of at least m entries, all zero on entry and on return.
void sample_distinct(std::int64_t k, std::int64_t m, Rng& rng, std::vector<char>& mark,
                     std::vector<std::int64_t>& out);

// Inverse-CDF sampler over a finite list of non-negative weights.
class DiscreteSampler {
 public:
  explicit DiscreteSampler(const std::vector<double>& weights);
  std::int64_t operator()(Rng& rng) const;  // index i with probability weights[i] / sum
  double probability(std::int64_t i) const;

 private:
  std::vector<double> cdf_;  // normalised cumulative sums, last entry exactly 1
};

// Logarithm, exponential and power built from IEEE-754 basic operations only, so that every
// platform computes the same bits (libm implementations may differ in the last place).
double det_log(double x);  // x > 0
double det_exp(double x);
double det_pow(double x, double y);  // x > 0

}  // namespace sparsetune::gen
