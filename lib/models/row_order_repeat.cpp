#include "models/row_order_repeat.hpp"

#include <cmath>

namespace sparsetune::models {

namespace {

// The fastest order timed in both collections, or -1.
int best_in(const std::vector<double>& t, const std::vector<double>& other) {
  int best = -1;
  for (std::size_t k = 0; k < t.size() && k < other.size(); ++k)
    if (t[k] > 0 && other[k] > 0 && (best < 0 || t[k] < t[best])) best = static_cast<int>(k);
  return best;
}

}  // namespace

nlohmann::json label_repeatability(const std::vector<CollectionTimes>& records) {
  double log_oracle = 0, log_cross = 0;
  int used = 0, pairs = 0, same = 0;
  for (const auto& c : records) {
    if (c.size() < 2) continue;
    bool counted = false;
    for (const auto& [a, b] : {std::pair{0, 1}, std::pair{1, 0}}) {
      const auto& ta = c[a];
      const auto& tb = c[b];
      if (ta.empty() || tb.empty() || ta[0] <= 0 || tb[0] <= 0) continue;
      const int best_a = best_in(ta, tb), best_b = best_in(tb, ta);
      if (best_a < 0 || best_b < 0) continue;
      log_oracle += std::log(tb[0] / tb[best_b]);
      log_cross += std::log(tb[0] / tb[best_a]);
      same += best_a == best_b;
      ++pairs;
      counted = true;
    }
    used += counted;
  }
  nlohmann::json out = {{"records", used}};
  if (pairs == 0) return out;
  const double oracle = std::exp(log_oracle / pairs), cross = std::exp(log_cross / pairs);
  out["pairs"] = pairs;
  out["same_best"] = static_cast<double>(same) / pairs;
  out["oracle_speedup"] = oracle;
  out["cross_speedup"] = cross;
  out["share_of_oracle_gain"] = oracle > 1.0 ? (cross - 1.0) / (oracle - 1.0) : 1.0;
  return out;
}

}  // namespace sparsetune::models
