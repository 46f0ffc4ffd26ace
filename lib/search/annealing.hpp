#pragma once
// Simulated annealing as the early-termination rule of the first two search levels (AlphaSparse
// §VI): each new score is accepted as the current state by the Metropolis rule, the temperature
// cools by a constant factor per step, and the level ends once it is frozen (the temperature fell
// below t_min) or `patience` steps in a row found no new best.
#include <cstdint>
#include <random>

#include "search/config.hpp"

namespace sparsetune::search {

// Probability of moving from a state scoring `current` to one scoring `candidate` (higher is
// better) at temperature t: 1 when not worse, else exp(-(current - candidate) / (|current| t)).
// The score loss is relative, so the schedule means the same for any GFLOP/s scale.
double acceptance_probability(double current, double candidate, double t);

class Annealer {
 public:
  Annealer(AnnealOptions opt, std::uint64_t seed);

  // Offers a new state's score; returns whether it became the current state. Cools one step.
  bool offer(double score);
  bool frozen() const;

  double temperature() const { return t_; }
  double current() const { return current_; }
  double best() const { return best_; }
  int steps() const { return steps_; }
  int stall() const { return stall_; }

 private:
  AnnealOptions opt_;
  std::mt19937_64 rng_;
  double t_;
  double current_ = -1, best_ = -1;
  int steps_ = 0, stall_ = 0;
};

}  // namespace sparsetune::search
