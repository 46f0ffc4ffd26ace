#pragma once
// The learned SpMV ranking ("spmv-rank", and "spmm-rank" for SpMM), trained by `sparsetune
// train` on measured times of one GPU architecture. Lower prediction, faster candidate: `tune
// --budget 0` picks by it, and a search with a budget orders its seeds by it. Two kinds:
//  - "xgboost-relative-regressor" (what `train` writes): one booster regresses log(time /
//    fastest), the fastest being the best time measured on the same matrix, over the matrix's
//    features and a candidate graph's descriptor (models/spmv_rank_features.hpp); a level
//    booster regresses log(fastest / floor) over the matrix's inputs alone. The first alone
//    ranks a matrix's candidates: its trees spend no depth on how far above the floor a matrix
//    runs, which differs between matrices far more than candidates differ on one. Their sum
//    gives the predicted time.
//  - "xgboost-regressor" (earlier files): one booster of log(time / floor).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graph/graph.hpp"
#include "models/model_file.hpp"
#include "models/xgb_regressor.hpp"

namespace sparsetune::models {

inline constexpr const char* kSpmvRankName = "spmv-rank";
inline constexpr const char* kSpmmRankName = "spmm-rank";
inline constexpr const char* kRelativeRankKind = "xgboost-relative-regressor";
inline constexpr const char* kAbsoluteRankKind = "xgboost-regressor";

// What the ranker needs to know of the matrix.
struct MatrixInputs {
  nlohmann::json features = nlohmann::json::object();  // {"group.name": value}
  std::string dtype = "f64";
  std::int64_t rows = 0, cols = 0, nnz = 0;
  std::int64_t n = 0;  // SpMM: B's column count (the spmm-rank model reads it); 0 for SpMV
};

class SpmvRanker {
 public:
  // `level` is required by, and only allowed with, a file of kind kRelativeRankKind.
  SpmvRanker(ModelFile file, XgbRegressor booster, std::optional<XgbRegressor> level = {});

  // Reads a description and its booster: spmv-rank, or spmm-rank (the same ranking for SpMM,
  // log2(n) among its inputs). Throws Error when either is malformed or the model is stale for
  // this program: another format version, or an input this program no longer computes
  // (feature_columns). Inputs added since it was trained are left out of its rows: a candidate
  // built with an operator it never saw is ranked as if the operator were not there.
  static SpmvRanker read(const std::string& description_path);
  // The shipped model `name` of `arch` under `dir` (configs/models), or nothing with `why` saying
  // so: missing, stale or unreadable.
  static std::optional<SpmvRanker> find(const std::string& dir, const std::string& arch,
                                        std::string* why, const char* name = kSpmvRankName);
  bool spmm() const { return file_.model == kSpmmRankName; }
  // Why a matrix of `nnz` entries is too far outside the training matrices' sizes (below half
  // the smallest or above twice the largest, where the description records them) for the model
  // to be trusted; "" when it is not.
  std::string outside_training(std::int64_t nnz) const;

  // Predicted microseconds of each candidate on the matrix.
  std::vector<double> predict_us(const MatrixInputs& m,
                                 const std::vector<const graph::Graph*>& candidates) const;

  const ModelFile& file() const { return file_; }
  // The matrices held out of its training (the description's split.test), by name.
  std::vector<std::string> test_matrices() const;
  const XgbRegressor& booster() const { return booster_; }

 private:
  ModelFile file_;
  XgbRegressor booster_;
  std::optional<XgbRegressor> level_;
  // Where each of the model's inputs sits in this program's row (models/spmv_rank_features.hpp),
  // by name; empty when the lists are the same.
  std::vector<std::size_t> columns_;
};

// Writes a trained model into `dir`: the booster file, the level booster's where `level` is
// given (the description then names it), the description naming them, and `extra` files (name,
// bytes), all put in place together. Returns the paths written, the description first. A booster
// file named *.ubj (the default, <model>.xgb.ubj) is XGBoost's UBJSON, any other its JSON.
std::vector<std::string> write_model(
    const std::string& dir, ModelFile file, const XgbRegressor& booster,
    const std::vector<std::pair<std::string, std::string>>& extra = {},
    const XgbRegressor* level = nullptr);

}  // namespace sparsetune::models
