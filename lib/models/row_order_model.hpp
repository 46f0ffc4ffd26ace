#pragma once
// The row-permutation predictor of Mehrabi et al. (ISPASS'21, §V) for output-stationary SpMM:
// from the 24 features of Table II (features::permutation_features) and N, an XGBoost regression
// of each order's log time relative to the original order's (so one matrix's times share a
// scale), the order with the lowest prediction chosen; samples weighted inversely to the
// frequency of their best order, as the paper weighs its classes. A direct classifier on the same
// inputs is trained beside it for comparison. Shipped as configs/models/<arch>/row-order.json
// (the description, models/model_file.hpp) and row-order.xgb.json (the boosters).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/row_orders.hpp"
#include "models/model_file.hpp"
#include "models/xgb_classifier.hpp"
#include "models/xgb_regressor.hpp"

namespace sparsetune::models {

inline constexpr const char* kRowOrderName = "row-order";

// One matrix at one N, every order timed.
// The tuning database's op of row-order times (collect --op spmm --row-orders, train --model
// row-order).
inline constexpr const char* kRowOrderOp = "spmm-row-order";

struct RowOrderRecord {
  std::string matrix;
  std::int64_t rows = 0, cols = 0, nnz = 0, n = 0;
  std::vector<double> features;  // permutation_features' values, in row_order_feature_names order
  std::vector<double> time_us;   // per order of row_orders::all_orders(); < 0: not measured
  std::vector<double> order_ms;  // per order: computing the permutation on the host
  double cusparse_us = -1;       // cuSPARSE's fastest verified SpMM at this N; < 0: not measured
  std::string notes;             // why an order has no time
  // Where the Hamming orders took their candidates (the other orders do not depend on it).
  row_orders::Candidates candidates = row_orders::Candidates::shared_lines;
};

// "permutation.<name>" for the 24 features; the model adds "log2_n".
std::vector<std::string> row_order_feature_names();
std::vector<std::string> row_order_model_inputs();
std::vector<double> row_order_inputs(const std::vector<double>& features, std::int64_t n);

// The CSV: matrix,rows,cols,nnz,n, the features, t_<order>..., ms_<order>..., cusparse_us,
// candidates, notes. Reading also takes the older headers without candidates (the matrix rule)
// and without cusparse_us (-1).
std::string row_order_csv(const std::vector<RowOrderRecord>& records);
// Throws Error naming PATH:LINE and the column at fault ('#' lines are comments).
std::vector<RowOrderRecord> read_row_order_csv(const std::string& path);

// The fastest measured order of a record (-1: none measured; the original must be measured for
// a record to be used in training).
int best_order(const RowOrderRecord& r);

// The measured time of `order`, or the original order's when it was not measured: a pick that
// fails to build leaves the matrix in its own order.
double order_time_us(const RowOrderRecord& r, int order);
// Every order has a slot, the original order was measured and the features are complete: a
// record training and scoring use.
bool usable_record(const RowOrderRecord& r);

struct RowOrderTrainOptions {
  double test_fraction = 0.25;  // of the matrices, stratified by nnz quantile
  std::uint64_t seed = 1;
  // Not empty: exactly these matrices are held out (test_fraction unused), as an earlier model
  // held them out (train --holdout-like), so that models of two databases meet the same test.
  std::set<std::string> held_out;
  std::string held_out_from;  // where held_out's names came from (recorded in the split)
  bool class_weights = true;  // weigh samples inversely to their best order's frequency
  // The orders the model chooses among (0: every order). K > 0 keeps the original order and the
  // K - 1 others that add most to the training records' oracle, one at a time (the paper's
  // Fig. 10, from which §V takes four classes); the others are neither fitted nor picked.
  int classes = 4;
  // Each regression starts from its order's mean log ratio over the training records of each N,
  // and the boosting (from 0, few shallow rounds) learns only what the features add to it. The
  // best fixed order per N keeps most of the oracle's gain on its own; unrestrained regressions
  // of the noisy ratios kept less (docs/benchmarks.md, "The row-order predictor against the
  // best fixed order per N").
  bool priors = true;
  XgbOptions xgb = {20, 2, 0.1};  // rounds, depth, learning rate
  // The regressions' boosting rounds, chosen by cross-validation over the training matrices
  // (the split's `inner_folds` folds, models/matrix_split.hpp; the rounds of `rounds_grid` that
  // keep the most of the held-out folds' oracle gain, the fewer on a tie); 0 folds: xgb.rounds. 0
  // rounds is the priors alone, the best class per N: the noisy ratios often teach the boosting
  // less than they mislead it.
  int inner_folds = 4;
  std::vector<int> rounds_grid = {0, 5, 10, 20, 40};
};

// The greedy choice above over `records` (each usable): the original order first, then the
// order that most raises the geometric mean of t_original / t_best-of-the-set, until `classes`
// orders (or every order) are in. `oracle` (if given) receives that mean after each addition.
std::vector<int> greedy_order_classes(const std::vector<const RowOrderRecord*>& records,
                                      int classes, std::vector<double>* oracle = nullptr);

class RowOrderModel {
 public:
  // Trains on the records of the training matrices and evaluates on the held-out ones;
  // `report` receives the split and the figures (oracle, predicted and classified speed-ups
  // over the original order, their share of the oracle's gain, exact-pick accuracy).
  static RowOrderModel train(const std::vector<RowOrderRecord>& records,
                             const RowOrderTrainOptions& o, nlohmann::json* report);

  // Predicted log(time / original time) of every order; the pick is the lowest.
  std::vector<double> predict_log_ratio(const std::vector<double>& features, std::int64_t n) const;
  int predict(const std::vector<double>& features, std::int64_t n) const;
  // The direct classifier's pick (the first of its orders when it has none).
  int classify(const std::vector<double>& features, std::int64_t n) const;
  // Whether the direct classifier was trained (two or more orders were ever best).
  bool has_classifier() const { return classifier_.has_value(); }

  // Writes row-order.json and row-order.xgb.json into `dir` (together); returns the paths.
  std::vector<std::string> write(const std::string& dir, ModelFile file) const;
  static RowOrderModel read(const std::string& description_path);
  // The shipped model of `arch` under `dir`, or nothing with `why` saying so.
  static std::optional<RowOrderModel> find(const std::string& dir, const std::string& arch,
                                           std::string* why);
  const ModelFile& file() const { return file_; }
  // The candidate rule of the Hamming orders it learned (options "candidates"; matrix if absent).
  row_orders::Candidates candidates() const;

 private:
  ModelFile file_;
  std::vector<XgbRegressor> regressors_;  // per order (not fitted: never measured, never picked)
  std::optional<XgbClassifier> classifier_;
  std::vector<int> classifier_orders_;  // class index -> order
  // Per order, (log2 N, the training records' mean log ratio at that N), ascending (empty: 0).
  std::vector<std::vector<std::pair<double, double>>> priors_;
  // The prior at n: linear in log2 N between the trained Ns, the nearest one's outside them.
  double prior(std::size_t order, std::int64_t n) const;
  // The model of `train`'s records (each usable) with the regressions boosted `rounds` times,
  // and with `classifier` the direct classifier too (the folds score the regressions alone);
  // `why` (if given) receives the classes with their oracle and the best-order counts.
  static RowOrderModel fit(const std::vector<const RowOrderRecord*>& train,
                           const RowOrderTrainOptions& o, int rounds, bool classifier,
                           nlohmann::json* why);
};

}  // namespace sparsetune::models
