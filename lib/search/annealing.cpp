#include "search/annealing.hpp"

#include <cmath>

namespace sparsetune::search {

double acceptance_probability(double current, double candidate, double t) {
  if (candidate >= current) return 1.0;
  if (!(t > 0) || current == 0) return 0.0;
  return std::exp(-(current - candidate) / (std::abs(current) * t));
}

Annealer::Annealer(AnnealOptions opt, std::uint64_t seed) : opt_(opt), rng_(seed), t_(opt.t0) {}

bool Annealer::offer(double score) {
  ++steps_;
  bool accepted = false;
  if (steps_ == 1) {
    accepted = true;
  } else {
    const double p = acceptance_probability(current_, score, t_);
    accepted = p >= 1.0 || std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < p;
  }
  if (accepted) current_ = score;
  if (score > best_) {
    best_ = score;
    stall_ = 0;
  } else {
    ++stall_;
  }
  t_ *= opt_.cooling;
  return accepted;
}

bool Annealer::frozen() const { return t_ < opt_.t_min || stall_ >= opt_.patience; }

}  // namespace sparsetune::search
