#pragma once
// `sparsetune eval`: how good a predictor's choice is, read from the tuning database. For each
// matrix, operation, value type and device with measured candidates that the predictor had
// ranked, its pick (the lowest prediction) is compared with the oracle (the fastest candidate
// measured for that key): top-1 accuracy and the pick's speed as a share of the oracle's.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "db/tuning_db.hpp"
#include "models/cell_predictor.hpp"
#include "models/crux_predictor.hpp"
#include "models/row_order_model.hpp"
#include "models/slice_gcn.hpp"
#include "models/slice_labels.hpp"
#include "models/spmv_ranker.hpp"

namespace sparsetune::report {

struct PickResult {
  std::string name, op, dtype, device;
  int ranked = 0;          // measured candidates the predictor had a time for
  std::string pick, best;  // candidate ids
  double pick_us = 0, oracle_us = 0;
  double share = 0;  // oracle_us / pick_us: 1 when the pick is the oracle
};

struct PredictorEval {
  std::string predictor;  // "cost-model", "spmv-rank"
  std::string note;       // what it ranked, e.g. the model's architecture and training set
  std::vector<PickResult> matrices;
  double top1 = 0;           // share of matrices where the pick is the oracle
  double geomean_share = 0;  // geometric mean of share
  double min_share = 0;
  int within_10_percent = 0;  // matrices with share >= 1/1.1
};

// Only matrices named in `only` when it is not empty.
PredictorEval evaluate_cost_model(const db::TuningDb& db,
                                  const std::vector<std::string>& only = {});

// The learned SpMV ranking: on every matrix with measured candidates of the model's architecture,
// its pick among them (all of them ranked) against the fastest one. With `as_cost_model`, it
// ranks only the candidates the cost model had ranked, so the two picks are made from the same
// candidates.
PredictorEval evaluate_spmv_ranker(const db::TuningDb& db, const models::SpmvRanker& ranker,
                                   const std::vector<std::string>& only = {},
                                   bool as_cost_model = false);

// MatXtract's crux predictor: on every matrix with a crux search of the model's architecture,
// the measured point standing for the predicted crux (models::judged_point) against the search's
// fastest point. `pick` and `best` are "(tau_c, tau_r)"; `ranked` the crux points measured.
PredictorEval evaluate_crux(const db::TuningDb& db, const models::CruxPredictor& crux,
                            const std::vector<std::string>& only = {});

// The row-order predictor (Mehrabi et al.): on each (matrix, N) timed under every order, the
// model's pick (its regression's argmin; with `classifier`, the direct classifier's) against the
// fastest order. One row per (matrix, N); a pick that was not timed counts as the original
// order's time, as training scores it (models::order_time_us). `ranked`: the orders timed.
PredictorEval evaluate_row_order(const std::vector<models::RowOrderRecord>& records,
                                 const models::RowOrderModel& model,
                                 const std::vector<std::string>& only = {},
                                 bool classifier = false);

// Slice-GCN's stage 2 (or, without a model, the structural rule tune falls back to): one row per
// labelled slice below stage 1's threshold `sp`, its predicted format against the fastest timed
// one (top-1 is the held-out accuracy the IAP-SpTV issue asks for). A pick that was not timed
// counts as twice the fastest, as models::judge_picks does. Tensor paths are absolute or relative
// to `base_dir`.
PredictorEval evaluate_slice_formats(const std::vector<models::SliceLabel>& labels,
                                     const std::string& base_dir, double sp,
                                     const models::SliceGcn* model);

// LiteForm's CELL-or-not (probability >= 0.5, as tune pins CELL): on each SpMM case (matrix, N)
// with CELL and the CSR family measured, the time of the side it picks (the best CELL graph, or
// the better of the best other graph and BSR) against the faster of the two. Top-1 is the
// classifier's accuracy against LiteForm's label (CELL at least 1.1x both).
PredictorEval evaluate_liteform_cell(const models::LiteformCases& cases,
                                     const models::CellPredictor& model,
                                     const std::vector<std::string>& only = {});

// LiteForm's partition count: on each case whose CELL graphs were measured, the fastest CELL
// graph of the predicted count (of the nearest count measured, the smaller on a tie) against the
// fastest CELL graph. Top-1: the predicted count is the fastest graph's.
PredictorEval evaluate_liteform_partitions(const models::LiteformCases& cases,
                                           const models::PartitionPredictor& model,
                                           const std::vector<std::string>& only = {});

nlohmann::json to_json(const PredictorEval& e);

}  // namespace sparsetune::report
