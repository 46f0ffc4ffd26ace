#pragma once
// MatXtract's crux predictor (§5): from the matrix's Table 2 features (the "matxtract" group) and
// the value type, two XGBoost regressions give the crux (τc, τr) that `tune --budget 0` uses and
// a searching tune tries first. `sparsetune train --model crux` learns it from the tuning
// database: each matrix's label is the fastest point of its crux search (the CRUX_SPLIT graphs
// measured there, the Bayesian optimisation's points), or no hot part, (0, 0), when that point
// gains under 2 % over the all-cold one.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/model_file.hpp"
#include "models/predictors.hpp"
#include "models/training_set.hpp"
#include "models/xgb_regressor.hpp"

namespace sparsetune::models {

inline constexpr const char* kCruxName = "crux";

// "matxtract.<name>" for the Table 2 features, then "dtype_f16".
std::vector<std::string> crux_feature_names();
// The inputs of a matrix ({"group.name": value}, as the database stores features); throws Error
// naming a missing feature.
std::vector<double> crux_inputs(const nlohmann::json& features, const std::string& dtype);

struct Crux {
  double tau_c = 0, tau_r = 0;  // 0 ≤ τr ≤ τc ≤ 1
};

class CruxPredictor {
 public:
  CruxPredictor(ModelFile file, XgbRegressor tau_c, XgbRegressor tau_r);
  static CruxPredictor read(const std::string& description_path);
  static std::optional<CruxPredictor> find(const std::string& dir, const std::string& arch,
                                           std::string* why);
  // Clamped into the triangle 0 ≤ τr ≤ τc ≤ 1.
  Crux predict(const nlohmann::json& features, const std::string& dtype) const;
  const ModelFile& file() const { return file_; }

 private:
  ModelFile file_;
  XgbRegressor tau_c_, tau_r_;
};

// One matrix's crux search as the database holds it (a value type, a device): every CRUX_SPLIT
// point measured, the fastest, the fastest all-cold one (tau_r = 0: every such point is one
// graph), and the label the predictor learns (the fastest point, or (0, 0) when a hot part gains
// under 2 % over the all-cold point).
struct CruxSearch {
  const MatrixSet* matrix = nullptr;
  std::vector<Crux> points;
  std::vector<double> us;
  std::size_t best = 0;
  std::optional<std::size_t> cold;
  Crux label;
};

// The crux searches of a training set: its matrices with 3 or more crux points.
std::vector<CruxSearch> crux_searches(const TrainingSet& t);

// The measured point that stands for a predicted crux: the all-cold point when it has no hot part
// (else, and with no all-cold point, the nearest measured point of the same kind, hot or cold);
// `how` says which.
std::size_t judged_point(const CruxSearch& s, Crux p, std::string* how = nullptr);

TrainResult train_crux(const db::TuningDb& db, const TrainOptions& opt);

}  // namespace sparsetune::models
