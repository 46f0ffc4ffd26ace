#pragma once
// `sparsetune report`: a tuning database summarised per matrix (CSV), and turned into plots and
// an index.html by a matplotlib script the program carries (scripts/report/render.py).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "db/tuning_db.hpp"

namespace sparsetune::report {

// One matrix, operation, value type and device: what the search found against cuSPARSE.
struct MatrixResult {
  std::string name, family, fingerprint, op, dtype, device;
  std::int64_t rows = 0, cols = 0, nnz = 0;
  std::optional<double> row_nnz_var;  // AlphaSparse's row variance, from the stored features
  std::optional<double> tuned_us;     // fastest correct operator graph (none: bench only)
  std::optional<double> cusparse_us;  // fastest verified cuSPARSE algorithm
  std::string cusparse_alg;
  std::optional<double> speedup;  // cusparse_us / tuned_us
  std::string winner;             // the winning graph, one line
  std::string structure;          // its known format's name, or grown:<hash>
  double achieved_gbs = 0;
  std::optional<double> peak_gbs, bandwidth_fraction;
  std::optional<double> search_s, wall_s;  // of the newest search (none: answered from the db)
  std::int64_t candidates = 0, structures = 0, failures = 0;  // measured rows of this key
};

// A measured candidate that the cost model had ranked: the two times side by side.
struct Prediction {
  std::string name, family, structure;
  double predicted_us = 0, measured_us = 0;
};

struct ReportData {
  std::vector<MatrixResult> matrices;  // by nnz, then name
  std::vector<Prediction> predictions;
  nlohmann::json summary;  // database, devices, matrices, geomean_speedup, tool_version
};

ReportData collect(const db::TuningDb& db);

// RFC 4180 text with the headers render.py reads.
std::string matrices_csv(const ReportData& d);
std::string predictions_csv(const ReportData& d);

struct ReportOptions {
  std::string database;
  std::string out_dir;
  bool plots = true;   // false: the CSV files and summary.json only
  std::string python;  // "": $SPARSETUNE_PYTHON, else /usr/bin/python3, else python3 on PATH
};

struct ReportOutcome {
  ReportData data;
  std::vector<std::string> files;
};

// Writes matrices.csv, predictions.csv, summary.json and (with plots) the PNGs and index.html,
// all or nothing: the folder is replaced as a whole (io::StagedFolder).
ReportOutcome write_report(const ReportOptions& o);

// The renderer's source, as embedded at build time.
const std::string& render_script();

}  // namespace sparsetune::report
