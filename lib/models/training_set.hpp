#pragma once
// What the predictors learn from, read from a tuning database: per matrix, value type and device
// of one GPU architecture, every operator graph measured correct (predictions, failures and the
// cuSPARSE rows left out), one time per distinct candidate, with the matrix's features.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "db/tuning_db.hpp"
#include "graph/graph.hpp"

namespace sparsetune::models {

struct Sample {
  std::string candidate;  // "graph/<hash>"
  graph::Graph graph;
  double time_us = 0;         // measured (geometric mean when measured more than once)
  double cost_model_us = -1;  // the cost model's time when it had ranked this one, else -1
};

struct MatrixSet {
  std::string fingerprint, name, family, dtype, device;
  std::string matrix;  // the database's name of the matrix (`name` adds " n=N" for SpMM)
  std::int64_t rows = 0, cols = 0, nnz = 0;
  std::int64_t n = 1;  // SpMM: B's column count (one set per n); SpMV: 1
  nlohmann::json features = nlohmann::json::object();
  std::vector<Sample> samples;
  std::size_t oracle = 0;  // index of the fastest sample
};

struct TrainingSet {
  std::string arch;
  std::vector<std::string> devices;
  std::vector<MatrixSet> matrices;  // ordered by name, then fingerprint, dtype, device
  std::string fingerprint;          // of every (matrix, candidate, time) used, in order
  std::int64_t rows = 0;            // samples in all
  nlohmann::json skipped = nlohmann::json::array();  // what was left out, and why
};

// The SpMV training set of `arch` ("": the architecture with the most measured rows; an
// error names the ones present when there are several and none is given). Throws Error when the
// database holds no measured SpMV operator graph of that architecture.
// With `allow_empty`, a database with nothing to learn from gives an empty set instead.
TrainingSet read_spmv_training_set(const db::TuningDb& db, const std::string& arch = "",
                                   bool allow_empty = false);

// The same for SpMM: one set per (matrix, n, value type, device), named "NAME n=N"; the
// fingerprint stays the matrix's, so a split by fingerprint keeps a matrix's n together.
TrainingSet read_spmm_training_set(const db::TuningDb& db, const std::string& arch = "",
                                   bool allow_empty = false);

// The order-sensitive 64-bit FNV-1a hash of some text, as 16 hex digits.
std::string text_hash(const std::string& text);

}  // namespace sparsetune::models
