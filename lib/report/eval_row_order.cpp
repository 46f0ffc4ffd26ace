// `sparsetune eval`: the row-order predictor's picks against the fastest measured order.
#include <algorithm>

#include "core/row_orders.hpp"
#include "report/eval.hpp"
#include "report/eval_summary.hpp"

namespace sparsetune::report {

PredictorEval evaluate_row_order(const std::vector<models::RowOrderRecord>& records,
                                 const models::RowOrderModel& model,
                                 const std::vector<std::string>& only, bool classifier) {
  const auto& orders = row_orders::all_orders();
  PredictorEval e;
  e.predictor = model.file().model + (classifier ? " (direct classifier)" : "");
  e.note = model.file().arch + ", trained " + model.file().created +
           (classifier ? "; the classifier trained beside the regression"
                       : "; the argmin of the predicted log time over the original order's");
  int top1 = 0;
  for (const auto& r : records) {
    if (!models::usable_record(r)) continue;
    if (!only.empty() && std::find(only.begin(), only.end(), r.matrix) == only.end()) continue;
    const int pick = classifier ? model.classify(r.features, r.n) : model.predict(r.features, r.n);
    const int best = models::best_order(r);
    PickResult p;
    p.name = r.matrix;
    p.op = "spmm n=" + std::to_string(r.n);
    p.ranked = static_cast<int>(
        std::count_if(r.time_us.begin(), r.time_us.end(), [](double t) { return t > 0; }));
    p.pick = row_orders::name(orders[static_cast<std::size_t>(pick)]);
    p.best = row_orders::name(orders[static_cast<std::size_t>(best)]);
    p.pick_us = models::order_time_us(r, pick);
    p.oracle_us = r.time_us[static_cast<std::size_t>(best)];
    p.share = p.oracle_us / p.pick_us;
    top1 += pick == best;
    e.matrices.push_back(std::move(p));
  }
  summarize(e, top1);
  return e;
}

}  // namespace sparsetune::report
