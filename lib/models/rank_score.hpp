#pragma once
// How good a ranking is where it matters: per matrix, the candidate it puts first (the lowest
// prediction) among those measured, against the fastest one measured (the oracle). Top-1 is the
// share of matrices where they are the same; the pick's speed as a share of the oracle's is
// summarised by its geometric mean and its worst case.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/training_set.hpp"

namespace sparsetune::models {

struct PickScore {
  std::string name, dtype, device;
  std::string matrix;  // the database's name of the matrix, and its n (SpMM; 1 for SpMV)
  std::int64_t n = 1;
  int ranked = 0;            // measured candidates the ranking had a prediction for
  std::string pick, oracle;  // candidate ids
  double pick_us = 0, oracle_us = 0;
  double share = 0;  // oracle_us / pick_us
};

struct RankingScore {
  std::vector<PickScore> matrices;  // worst share first
  double top1 = 0, geomean_share = 0, min_share = 0;
  int within_10_percent = 0;  // share >= 1/1.1
  nlohmann::json to_json() const;
};

// `predicted[k][j]` ranks sample j of matrix `which[k]` of the set (lower: faster; NaN: not
// ranked). Matrices where nothing was ranked are left out.
RankingScore score_picks(const TrainingSet& t, const std::vector<std::size_t>& which,
                         const std::vector<std::vector<double>>& predicted);

}  // namespace sparsetune::models
