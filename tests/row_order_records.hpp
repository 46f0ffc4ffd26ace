#pragma once
// Row-order records whose best order is a known function of the features (tests only): matrix i
// has feature 3 (nnz_per_row_mean) = i % 3, which makes order 0, 4 or 7 the fastest at 10 us; the
// other orders take 13 us and a little more each. Both N = 32 and 128.
#include <cmath>
#include <string>
#include <vector>

#include "core/row_orders.hpp"
#include "models/row_order_model.hpp"

namespace sparsetune::testing {

inline std::vector<models::RowOrderRecord> feature_decided_records(int matrices) {
  const auto nf = models::row_order_feature_names().size();
  const auto no = row_orders::all_orders().size();
  std::vector<models::RowOrderRecord> out;
  for (int i = 0; i < matrices; ++i)
    for (std::int64_t n : {32, 128}) {
      models::RowOrderRecord r;
      r.matrix = "m";
      r.matrix += std::to_string(i);
      r.rows = r.cols = 1000 + i;
      r.nnz = 5000 + 137 * i;
      r.n = n;
      r.features.assign(nf, 0.0);
      for (std::size_t k = 0; k < nf; ++k) r.features[k] = std::fmod(0.37 * i * (k + 1), 7.0);
      r.features[3] = i % 3;  // the deciding feature
      const int best = r.features[3] == 0 ? 0 : r.features[3] == 1 ? 4 : 7;
      for (std::size_t k = 0; k < no; ++k)
        r.time_us.push_back(static_cast<int>(k) == best ? 10.0 : 10.0 * (1.3 + 0.01 * k));
      r.order_ms.assign(no, 0.5);
      out.push_back(r);
    }
  return out;
}

}  // namespace sparsetune::testing
