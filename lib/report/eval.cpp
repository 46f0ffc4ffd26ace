#include "report/eval.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "models/rank_score.hpp"
#include "models/training_set.hpp"
#include "report/eval_summary.hpp"
#include "report/rows.hpp"

namespace sparsetune::report {

void summarize(PredictorEval& e, int top1) {
  std::sort(e.matrices.begin(), e.matrices.end(),
            [](const PickResult& x, const PickResult& y) { return x.share < y.share; });
  if (e.matrices.empty()) return;
  double log_sum = 0;
  for (const auto& r : e.matrices) {
    log_sum += std::log(r.share);
    e.within_10_percent += r.share >= 1.0 / 1.1;
  }
  const double n = static_cast<double>(e.matrices.size());
  e.top1 = top1 / n;
  e.geomean_share = std::exp(log_sum / n);
  e.min_share = e.matrices.front().share;
}

PredictorEval evaluate_cost_model(const db::TuningDb& db, const std::vector<std::string>& only) {
  std::map<std::string, std::string> names;
  for (const auto& m : db.matrices()) names[m.fingerprint] = m.name;
  struct Acc {
    const db::Measurement* best = nullptr;  // fastest measured graph of the key
    const db::Measurement* pick = nullptr;  // lowest prediction among the measured ones
    double pick_predicted = 0;
    int ranked = 0;
  };
  const auto all = db.measurements();
  std::map<RowKey, Acc> acc;
  for (const auto& m : all) {
    if (!m.ok || m.time_us <= 0 || m.candidate.rfind("graph/", 0) != 0) continue;
    const auto p = params_of(m);
    if (p.value("predicted", false)) continue;  // a prediction, not a time
    auto& a = acc[key_of(m)];
    if (!a.best || m.time_us < a.best->time_us) a.best = &m;
    if (!p.contains("predicted_us") || !p["predicted_us"].is_number()) continue;
    const double predicted = p["predicted_us"].get<double>();
    ++a.ranked;
    if (!a.pick || predicted < a.pick_predicted) a.pick = &m, a.pick_predicted = predicted;
  }

  PredictorEval e;
  e.predictor = "cost-model";
  e.note = "its predictions stored beside the measured candidates it ranked";
  int top1 = 0;
  for (const auto& [k, a] : acc) {
    if (!a.pick) continue;
    const auto& [fp, op, dtype, n, device] = k;
    const std::string name = names.count(fp) ? names[fp] : fp;
    if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
    PickResult r;
    r.name = name;
    r.op = op_label(op, n);
    r.dtype = dtype;
    r.device = device;
    r.ranked = a.ranked;
    r.pick = a.pick->candidate;
    r.best = a.best->candidate;
    r.pick_us = a.pick->time_us;
    r.oracle_us = a.best->time_us;
    r.share = r.oracle_us / r.pick_us;
    top1 += r.pick == r.best || r.pick_us <= r.oracle_us;  // a tie in time is the oracle too
    e.matrices.push_back(std::move(r));
  }
  summarize(e, top1);
  return e;
}

PredictorEval evaluate_spmv_ranker(const db::TuningDb& db, const models::SpmvRanker& ranker,
                                   const std::vector<std::string>& only, bool as_cost_model) {
  const bool spmm = ranker.spmm();
  const auto t = spmm ? models::read_spmm_training_set(db, ranker.file().arch, true)
                      : models::read_spmv_training_set(db, ranker.file().arch, true);
  std::vector<std::size_t> which;
  std::vector<std::vector<double>> predicted;
  for (std::size_t m = 0; m < t.matrices.size(); ++m) {
    const auto& s = t.matrices[m];
    if (!only.empty() && std::find(only.begin(), only.end(), s.matrix) == only.end()) continue;
    std::vector<const graph::Graph*> graphs;
    for (const auto& x : s.samples) graphs.push_back(&x.graph);
    which.push_back(m);
    predicted.push_back(
        ranker.predict_us({s.features, s.dtype, s.rows, s.cols, s.nnz, spmm ? s.n : 0}, graphs));
    if (as_cost_model)
      for (std::size_t k = 0; k < s.samples.size(); ++k)
        if (!(s.samples[k].cost_model_us > 0)) predicted.back()[k] = std::nan("");
  }
  const auto r = models::score_picks(t, which, predicted);
  PredictorEval e;
  e.predictor = ranker.file().model + (as_cost_model ? " (cost model's candidates)" : "");
  e.note = ranker.file().arch + ", trained " + ranker.file().created + " on " +
           ranker.file().training_set.value("fingerprint", "?");
  for (const auto& p : r.matrices)
    e.matrices.push_back({p.matrix, spmm ? "spmm n=" + std::to_string(p.n) : "spmv", p.dtype,
                          p.device, p.ranked, p.pick, p.oracle, p.pick_us, p.oracle_us, p.share});
  e.top1 = r.top1;
  e.geomean_share = r.geomean_share;
  e.min_share = r.min_share;
  e.within_10_percent = r.within_10_percent;
  return e;
}

PredictorEval evaluate_crux(const db::TuningDb& db, const models::CruxPredictor& crux,
                            const std::vector<std::string>& only) {
  const auto t = models::read_spmv_training_set(db, crux.file().arch, true);
  const auto point = [](const models::Crux& c) {
    char s[64];
    std::snprintf(s, sizeof s, "(%.2f, %.2f)", c.tau_c, c.tau_r);
    return std::string(s);
  };
  PredictorEval e;
  e.predictor = crux.file().model;
  e.note = crux.file().arch + ", trained " + crux.file().created +
           "; a prediction is judged by the measured point of its graph (the all-cold point "
           "when it has no hot part), else the nearest measured point";
  int top1 = 0;
  for (const auto& s : models::crux_searches(t)) {
    const auto& m = *s.matrix;
    if (!only.empty() && std::find(only.begin(), only.end(), m.matrix) == only.end()) continue;
    const auto p = crux.predict(m.features, m.dtype);
    const std::size_t k = models::judged_point(s, p);
    PickResult r;
    r.name = m.matrix;
    r.op = "spmv";
    r.dtype = m.dtype;
    r.device = m.device;
    r.ranked = static_cast<int>(s.points.size());
    r.pick = point(p);
    r.best = point(s.points[s.best]);
    r.pick_us = s.us[k];
    r.oracle_us = s.us[s.best];
    r.share = r.oracle_us / r.pick_us;               // measured times are positive
    top1 += k == s.best || s.us[k] <= s.us[s.best];  // a tie in time is the oracle too
    e.matrices.push_back(std::move(r));
  }
  summarize(e, top1);
  return e;
}

nlohmann::json to_json(const PredictorEval& e) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : e.matrices)
    rows.push_back({{"matrix", r.name},
                    {"op", r.op},
                    {"dtype", r.dtype},
                    {"device", r.device},
                    {"ranked", r.ranked},
                    {"pick", r.pick},
                    {"oracle", r.best},
                    {"pick_us", r.pick_us},
                    {"oracle_us", r.oracle_us},
                    {"share_of_oracle", r.share}});
  return {{"predictor", e.predictor},
          {"note", e.note},
          {"matrices", e.matrices.size()},
          {"top1_accuracy", e.top1},
          {"geomean_share_of_oracle", e.geomean_share},
          {"min_share_of_oracle", e.min_share},
          {"within_10_percent", e.within_10_percent},
          {"per_matrix", rows}};
}

}  // namespace sparsetune::report
