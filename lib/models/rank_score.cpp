#include "models/rank_score.hpp"

#include <algorithm>
#include <cmath>

namespace sparsetune::models {

RankingScore score_picks(const TrainingSet& t, const std::vector<std::size_t>& which,
                         const std::vector<std::vector<double>>& predicted) {
  RankingScore r;
  double log_sum = 0;
  int top1 = 0;
  for (std::size_t k = 0; k < which.size() && k < predicted.size(); ++k) {
    const auto& m = t.matrices[which[k]];
    const auto& p = predicted[k];
    PickScore s;
    std::size_t pick = 0;
    for (std::size_t j = 0; j < m.samples.size() && j < p.size(); ++j) {
      if (std::isnan(p[j])) continue;
      if (s.ranked == 0 || p[j] < p[pick]) pick = j;
      ++s.ranked;
    }
    if (s.ranked == 0) continue;
    s.name = m.name;
    s.matrix = m.matrix;
    s.n = m.n;
    s.dtype = m.dtype;
    s.device = m.device;
    s.pick = m.samples[pick].candidate;
    s.oracle = m.samples[m.oracle].candidate;
    s.pick_us = m.samples[pick].time_us;
    s.oracle_us = m.samples[m.oracle].time_us;
    s.share = s.oracle_us / s.pick_us;
    log_sum += std::log(s.share);
    top1 += s.pick == s.oracle || s.pick_us <= s.oracle_us;  // a tie in time is the oracle too
    r.within_10_percent += s.share >= 1.0 / 1.1;
    r.matrices.push_back(std::move(s));
  }
  std::stable_sort(r.matrices.begin(), r.matrices.end(),
                   [](const PickScore& x, const PickScore& y) { return x.share < y.share; });
  if (!r.matrices.empty()) {
    const double n = static_cast<double>(r.matrices.size());
    r.top1 = top1 / n;
    r.geomean_share = std::exp(log_sum / n);
    r.min_share = r.matrices.front().share;
  }
  return r;
}

nlohmann::json RankingScore::to_json() const {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& s : matrices)
    rows.push_back({{"matrix", s.name},
                    {"dtype", s.dtype},
                    {"device", s.device},
                    {"ranked", s.ranked},
                    {"pick", s.pick},
                    {"oracle", s.oracle},
                    {"pick_us", s.pick_us},
                    {"oracle_us", s.oracle_us},
                    {"share_of_oracle", s.share}});
  return {{"matrices", matrices.size()},
          {"top1_accuracy", top1},
          {"geomean_share_of_oracle", geomean_share},
          {"min_share_of_oracle", min_share},
          {"within_10_percent", within_10_percent},
          {"per_matrix", rows}};
}

}  // namespace sparsetune::models
