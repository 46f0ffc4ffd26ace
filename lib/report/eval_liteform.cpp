// `sparsetune eval`: LiteForm's two SpMM predictors against the measured CELL and CSR-family
// graphs.
#include <algorithm>
#include <cstdlib>

#include "report/eval.hpp"
#include "report/eval_summary.hpp"

namespace sparsetune::report {

namespace {

bool listed(const std::vector<std::string>& only, const std::string& name) {
  return only.empty() || std::find(only.begin(), only.end(), name) != only.end();
}

PickResult row_of(const models::LiteformCase& c) {
  PickResult r;
  r.name = c.name;
  r.op = "spmm n=" + std::to_string(c.n);
  r.dtype = c.dtype;
  r.device = c.device;
  return r;
}

}  // namespace

PredictorEval evaluate_liteform_cell(const models::LiteformCases& cases,
                                     const models::CellPredictor& model,
                                     const std::vector<std::string>& only) {
  PredictorEval e;
  e.predictor = model.file().model;
  e.note = model.file().arch + ", trained " + model.file().created +
           "; top-1 against CELL >= 1.1x both the best other graph and BSR";
  int right = 0;
  for (const auto& c : cases.usable) {
    if (!listed(only, c.name)) continue;
    const bool cell = model.probability(c.features, c.n) >= 0.5;
    const double other = std::min(c.csr, c.bcsr);
    PickResult r = row_of(c);
    r.ranked = 2 + (c.bcsr < models::LiteformCase::kNone);
    r.pick = cell ? "CELL" : "not CELL";
    r.best = c.label() ? "CELL" : "not CELL";
    r.pick_us = cell ? c.cell : other;
    r.oracle_us = std::min(c.cell, other);
    r.share = r.oracle_us / r.pick_us;
    right += cell == c.label();
    e.matrices.push_back(std::move(r));
  }
  summarize(e, right);
  return e;
}

PredictorEval evaluate_liteform_partitions(const models::LiteformCases& cases,
                                           const models::PartitionPredictor& model,
                                           const std::vector<std::string>& only) {
  PredictorEval e;
  e.predictor = model.file().model;
  e.note = model.file().arch + ", trained " + model.file().created +
           "; a count never measured is judged by the nearest one measured";
  int right = 0;
  for (const auto& c : cases.usable) {
    if (!listed(only, c.name) || c.cell_by_count.empty() || c.partitions < 1) continue;
    const int q = model.predict(c.features, c.n);
    // The measured count nearest the prediction (the map is ascending: the smaller wins a tie).
    auto judged = c.cell_by_count.begin();
    for (auto it = c.cell_by_count.begin(); it != c.cell_by_count.end(); ++it)
      if (std::abs(it->first - q) < std::abs(judged->first - q)) judged = it;
    PickResult r = row_of(c);
    r.ranked = static_cast<int>(c.cell_by_count.size());
    r.pick = std::to_string(q);
    r.best = std::to_string(c.partitions);
    r.pick_us = judged->second;
    r.oracle_us = c.cell;
    r.share = r.oracle_us / r.pick_us;
    right += q == c.partitions;
    e.matrices.push_back(std::move(r));
  }
  summarize(e, right);
  return e;
}

}  // namespace sparsetune::report
