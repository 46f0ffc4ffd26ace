#pragma once
// A gradient-boosted tree regressor (XGBoost C API) over small dense tables: the search trains one
// per operator-graph structure on the parameters measured so far and predicts the fine grid; the
// shipped predictors (models/spmv_ranker.hpp) are saved ones, loaded again from their bytes.
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace sparsetune::models {

struct XgbOptions {
  int rounds = 80;    // boosting iterations
  int max_depth = 4;  // tree depth
  double eta = 0.3;   // learning rate
  double min_child_weight = 1.0;
  std::uint64_t seed = 0;
  int threads = 1;         // one thread: results are reproducible and the tables are tiny
  double subsample = 1.0;  // rows drawn per tree
  double colsample = 1.0;  // columns drawn per tree
  // The regressor's starting prediction (NaN: the library's, 0.5 in XGBoost 1.7). Targets near
  // zero trained with few rounds need 0: a start of 0.5 would not be learned away.
  double base_score = std::numeric_limits<double>::quiet_NaN();
};

class XgbRegressor {
 public:
  explicit XgbRegressor(XgbOptions opt = {});
  ~XgbRegressor();
  XgbRegressor(const XgbRegressor&) = delete;
  XgbRegressor& operator=(const XgbRegressor&) = delete;
  XgbRegressor(XgbRegressor&& o) noexcept;
  XgbRegressor& operator=(XgbRegressor&& o) noexcept;

  // Trains on rows x (all of one width) and targets y; replaces any earlier model. Throws Error
  // on an empty or ragged table, a non-finite value, or a library failure.
  // `weights` (one per row, or empty) weigh the rows' errors.
  void fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
           const std::vector<double>& weights = {});
  // One prediction per row; throws Error before fit() or on a row of the wrong width.
  std::vector<double> predict(const std::vector<std::vector<double>>& x) const;

  // The trained model in XGBoost's JSON model format; throws Error before fit().
  std::string save() const;
  // The same in XGBoost's binary JSON (UBJSON): about 60 % of the size, and read about ten times
  // faster, which a large model's predict-only answer feels. load() reads either.
  std::string save_binary() const;
  // A model saved by save(), for rows of `width` values; throws Error naming `source` when the
  // bytes are not one.
  static XgbRegressor load(std::string_view bytes, std::size_t width, const std::string& source);
  // One model whose prediction is the mean of `models`' (bagging): their trees side by side, each
  // leaf scaled by 1 / models.size(). Throws Error when they are not fitted, or differ in width or
  // base score (a mean of trees would then not be a mean of predictions).
  static XgbRegressor average(const std::vector<XgbRegressor>& models);

  bool fitted() const { return booster_ != nullptr; }
  std::size_t width() const { return width_; }

 private:
  void release();
  XgbOptions opt_;
  void* booster_ = nullptr;  // BoosterHandle
  std::size_t width_ = 0;
};

}  // namespace sparsetune::models
