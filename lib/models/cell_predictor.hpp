#pragma once
// LiteForm's first predictor (§5): CELL or not. From the matrix's Table 2 features (the
// "liteform" group) and N, an XGBoost classifier says whether CELL will be at least 1.1x both
// the best CSR-family SpMM graph and BCSR (cuSPARSE's BSR), the label LiteForm trains on.
// `sparsetune train --model liteform-cell` learns it from the SpMM rows of the tuning database;
// `tune --op spmm` then keeps CELL out of a predict-only answer the model rules it out of.
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/model_file.hpp"
#include "models/predictors.hpp"
#include "models/xgb_classifier.hpp"

namespace sparsetune::models {

inline constexpr const char* kCellName = "liteform-cell";

// "liteform.<name>" for the Table 2 features, then "log2_n".
std::vector<std::string> cell_feature_names();
std::vector<double> cell_inputs(const nlohmann::json& features, std::int64_t n);

// A graph that is CELL: column partitions binned by row length (COL_DIV over BIN).
bool is_cell_graph(const std::string& graph_json);

// One matrix at one N (value type, device) of the SpMM rows: the best CELL graph, the best other
// graph and BSR, as the LiteForm predictors learn and are scored from them.
struct LiteformCase {
  static constexpr double kNone = std::numeric_limits<double>::infinity();
  std::string fingerprint, name, dtype, device;
  std::int64_t n = 0, nnz = 0;
  nlohmann::json features;
  double cell = kNone, csr = kNone, bcsr = kNone;  // fastest times (kNone: not measured)
  int partitions = 0;                              // COL_DIV's count in the fastest CELL graph
  std::map<int, double> cell_by_count;             // the fastest CELL graph of each partition count
  // LiteForm's label: CELL at least 1.1x both the best CSR-family graph and BSR.
  bool label() const { return csr / cell >= 1.1 && bcsr / cell >= 1.1; }
};

struct LiteformCases {
  std::vector<LiteformCase> usable;  // CELL and the CSR family both measured, features present
  std::map<std::string, db::MatrixRow> matrix;
  std::string arch;
  std::string devices;  // the usable cases' GPUs, comma-separated
};

// The SpMM rows of `arch` ("": any, but only one) as cases; throws Error when several
// architectures are present and none is named.
LiteformCases read_liteform_cases(const db::TuningDb& db, const std::string& arch);

class CellPredictor {
 public:
  CellPredictor(ModelFile file, XgbClassifier booster);
  static CellPredictor read(const std::string& description_path);
  static std::optional<CellPredictor> find(const std::string& dir, const std::string& arch,
                                           std::string* why);
  // The probability that CELL wins by 1.1x.
  double probability(const nlohmann::json& features, std::int64_t n) const;
  const ModelFile& file() const { return file_; }

 private:
  ModelFile file_;
  XgbClassifier booster_;
};

TrainResult train_liteform_cell(const db::TuningDb& db, const TrainOptions& opt);

// LiteForm's second predictor: the number of column partitions of CELL, a classifier over the
// counts the fastest CELL graphs had, from the same inputs; judged by accuracy and the paper's
// similarities, eq. (1) per case and eq. (2) per matrix across its N.
inline constexpr const char* kPartitionsName = "liteform-partitions";

class PartitionPredictor {
 public:
  PartitionPredictor(ModelFile file, XgbClassifier booster, std::vector<int> counts);
  static PartitionPredictor read(const std::string& description_path);
  static std::optional<PartitionPredictor> find(const std::string& dir, const std::string& arch,
                                                std::string* why);
  int predict(const nlohmann::json& features, std::int64_t n) const;
  const ModelFile& file() const { return file_; }

 private:
  ModelFile file_;
  XgbClassifier booster_;
  std::vector<int> counts_;  // class -> partitions
};

TrainResult train_liteform_partitions(const db::TuningDb& db, const TrainOptions& opt);

}  // namespace sparsetune::models
