#pragma once
// The predictors `sparsetune train` builds from a tuning database. Adding one is a file of its own
// (its training function) and a line in predictors.cpp.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/row_orders.hpp"
#include "db/tuning_db.hpp"
#include "models/matrix_split.hpp"
#include "models/xgb_regressor.hpp"

namespace sparsetune::models {

struct TrainOptions {
  std::string out_dir;  // models go to <out_dir>/<arch>/; "": nothing is written
  std::string arch;     // "": the database's one architecture
  SplitOptions split;
  std::string created;          // date recorded in the model ("": today, UTC)
  std::string database;         // the training data's name, recorded in the model
  int threads = 1;              // XGBoost threads (1: bit-for-bit reproducible); Slice-GCN's batch
                                // threads (the same model whatever their number)
  int bag = 1;                  // the rankings: each booster the mean of this many, trained under
                                // the seeds seed, seed + 1, ... (models/xgb_regressor.hpp);
                                // Slice-GCN: a bag of this many networks (slice_training.hpp)
  int epochs = 0;               // Slice-GCN's training epochs (0: its default)
  bool fiber_globals = false;   // Slice-GCN reads the 5 fiber features after the paper's 9
  bool degree_buckets = false;  // Slice-GCN: each node's degree bucket among its features
  int average_last = 0;         // Slice-GCN: the mean of the last epochs' weights (0: the last's)
  int global_bins = 0;          // Slice-GCN: quantile bins of each global (slice_gcn.hpp)
  double soft_labels = 0;       // Slice-GCN: learn from the measured times (slice_training.hpp)
  std::string data_dir;         // Slice-GCN: the tensors looked up here by file name ("": the paths
                                // the database records)
  bool no_class_weights = false;  // row-order: every sample weighed alike (else inversely to the
                                  // frequency of its best order, as the paper weighs them)
  int order_classes = 4;   // row-order: the orders it chooses among (0: all; RowOrderTrainOptions)
  bool no_priors = false;  // row-order: regressions from zero instead of each order's mean per N
  // row-order: the Hamming orders' candidate rule whose times it learns (core/row_orders.hpp)
  row_orders::Candidates order_candidates = row_orders::Candidates::shared_lines;
};

// A database without the measurements a predictor learns from (`train --model all` skips that
// predictor and says why; naming it alone fails).
class NothingToLearn : public Error {
 public:
  using Error::Error;
};

struct TrainResult {
  std::string model;
  nlohmann::json report;           // also written beside the model as <name>.report.json
  std::vector<std::string> files;  // written
};

struct Predictor {
  const char* name;
  const char* summary;
  TrainResult (*train)(const db::TuningDb&, const TrainOptions&);
  // Why it cannot hold out the matrices another model file held out (train --holdout-like,
  // SplitOptions::held_out); nullptr: it can.
  const char* no_holdout_like = nullptr;
  bool bags = false;  // its models can be bagged (TrainOptions::bag)
};

// Every predictor, in registration order.
const std::vector<Predictor>& predictors();
// The predictor of that name; throws Error listing the known ones.
const Predictor& find_predictor(const std::string& name);

// Throws Error when `model` (a predictor's name, or "all") cannot be trained as asked: --bag for
// a predictor without bagging, --holdout-like (`holdout_like`) for "all" or for a predictor that
// draws its own split. The messages name the predictors that can.
void check_train_request(const std::string& model, const TrainOptions& opt, bool holdout_like);

// The boosting the small-table predictors (crux, liteform-*) train with: 200 rounds of depth-4
// trees at eta 0.1, seeded by the split's seed, on opt.threads threads.
XgbOptions predictor_xgb(const TrainOptions& opt);

// Today's date, UTC, as YYYY-MM-DD.
std::string today_utc();

// One predictor per file:
TrainResult train_spmv_rank(const db::TuningDb& db, const TrainOptions& opt);
TrainResult train_spmm_rank(const db::TuningDb& db, const TrainOptions& opt);
TrainResult train_crux(const db::TuningDb& db, const TrainOptions& opt);
TrainResult train_liteform_cell(const db::TuningDb& db, const TrainOptions& opt);
TrainResult train_liteform_partitions(const db::TuningDb& db, const TrainOptions& opt);
TrainResult train_slice_gcn_model(const db::TuningDb& db, const TrainOptions& opt);
TrainResult train_row_order_model(const db::TuningDb& db, const TrainOptions& opt);

}  // namespace sparsetune::models
