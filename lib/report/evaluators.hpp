#pragma once
// The predictors `sparsetune eval` scores, each from the tuning database's measurements: the cost
// model, the learned SpMV and SpMM rankings, MatXtract's crux, LiteForm's two predictors, the
// row-order predictor and Slice-GCN. Adding one is a function of its own (eval_<name>.cpp) and a
// line in evaluators.cpp.
#include <string>
#include <utility>
#include <vector>

#include "db/tuning_db.hpp"
#include "report/eval.hpp"

namespace sparsetune::report {

struct EvalOptions {
  std::string database;    // the database's name, for messages
  std::string models_dir;  // the shipped models' folder (configs/models)
  std::string arch = "sm_90";
  // A model file to score instead of the shipped one: only its predictor (and the cost model)
  // is scored. A .safetensors file is a Slice-GCN, any other a model description.
  std::string model;
  std::vector<std::string> only;  // matrices (names as the database has them) or tensor files
  bool test_split = false;        // each model on the held-out part its file lists
  std::string data_dir;           // Slice-GCN: the tensors looked up here by file name
};

struct Evaluator {
  const char* name;
  const char* summary;
  // Its evaluations; none, with `why` saying why, when it has no model or nothing to score.
  std::vector<PredictorEval> (*evaluate)(const db::TuningDb&, const EvalOptions&, std::string* why);
};

// Every evaluator, in the order eval prints them.
const std::vector<Evaluator>& evaluators();

struct EvalRun {
  std::vector<PredictorEval> evals;
  std::vector<std::pair<std::string, std::string>> skipped;  // (evaluator, why)
};

// The evaluators named in `names` (all when empty); throws Error on an unknown name, and when
// --test-split leaves none of them anything to score (saying why for each).
EvalRun run_evaluators(const db::TuningDb& db, const EvalOptions& o,
                       const std::vector<std::string>& names = {});

// The predictor a model file is for: "slice-gcn" for a .safetensors file, else the description's
// "model" field.
std::string model_kind(const std::string& path);

}  // namespace sparsetune::report
