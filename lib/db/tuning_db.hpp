#pragma once
// The tuning database: every measured candidate is a row. It is the tuning cache (re-tuning a
// matrix on the same device answers from it) and the training data of the predictors.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace sparsetune::db {

// One measurement of one candidate (or one failure) on one matrix and device.
struct Measurement {
  std::string fingerprint;  // core::fingerprint of the matrix
  std::string op;           // spmv | spmm | sptv
  std::string dtype;        // f32 | f64 | f16
  std::int64_t n = 1;       // dense columns (SpMM), mode (SpTV) or 1
  std::string device;       // device name, e.g. "NVIDIA H100 80GB HBM3"
  std::string arch;         // sm_90
  std::string tool_version;
  std::string candidate;  // stable identity, e.g. "cusparse/csr_alg1" or "graph/<hash>"
  std::string graph;      // operator graph JSON ("" for baselines)
  std::string params;     // parameter JSON
  double time_us = 0;     // median
  double gflops = 0;
  double gbps = 0;
  double error = 0;     // relative L2 error against the fp64 reference
  bool ok = true;       // false: failed (fault, timeout, wrong result)
  std::string failure;  // reason when !ok
};

struct MatrixRow {
  std::string fingerprint;
  std::string name;
  std::int64_t rows = 0, cols = 0, nnz = 0;
  std::string features;  // JSON object
};

// One completed `tune` of a matrix: what the search did and what it found, for reports and
// for deciding that a matrix is done (measurements alone may be a killed run's).
struct Run {
  std::string fingerprint, op, dtype;
  std::int64_t n = 1;
  std::string device, arch, tool_version;
  std::string family;    // SuiteSparse group, generator kind, or what the user says
  std::string winner;    // candidate id of the answer ("graph/<hash>")
  double winner_us = 0;  // its time (flushed median)
  std::string baseline;  // fastest verified cuSPARSE candidate, "" when none measured
  double baseline_us = 0;
  double peak_gbs = 0;  // the device's measured bandwidth, 0 when unknown
  double search_s = 0, wall_s = 0;
  std::int64_t candidates = 0, structures = 0, failures = 0;
  bool from_database = false;  // answered from earlier measurements, no search
  std::string created_at;      // set by add_run when empty (an import keeps the exported one)
};

// What a database holds, for `db stats`.
struct Stats {
  std::int64_t matrices = 0;
  std::int64_t measurements = 0;
  std::int64_t runs = 0;
  std::int64_t failures = 0;
  std::vector<std::pair<std::string, std::int64_t>> per_device;
  std::vector<std::pair<std::string, std::int64_t>> per_op;
};

class TuningDb {
 public:
  // Opens (creating if needed, with parent folders) the database at `path`.
  explicit TuningDb(const std::string& path);
  ~TuningDb();
  TuningDb(const TuningDb&) = delete;
  TuningDb& operator=(const TuningDb&) = delete;

  // $XDG_DATA_HOME/sparsetune/tuning.db, else ~/.local/share/sparsetune/tuning.db.
  static std::string default_path();

  void put_matrix(const MatrixRow& m);
  std::optional<MatrixRow> matrix(const std::string& fingerprint) const;

  // Records a measurement; an identical row (same identity and result) is stored once.
  void add(const Measurement& m);

  // The fastest correct operator graph measured for this matrix, operation and device, if any
  // (the cuSPARSE rows measured beside it are not answers).
  std::optional<Measurement> best(const std::string& fingerprint, const std::string& op,
                                  const std::string& dtype, std::int64_t n,
                                  const std::string& device) const;

  // Records a completed tune.
  void add_run(const Run& r);
  // Every run (of one matrix when fingerprint is given), oldest first.
  std::vector<Run> runs(const std::string& fingerprint = "") const;
  // The newest run that searched (not answered from the database) for this key, if any.
  std::optional<Run> last_search(const std::string& fingerprint, const std::string& op,
                                 const std::string& dtype, std::int64_t n,
                                 const std::string& device) const;
  // Every matrix row.
  std::vector<MatrixRow> matrices() const;

  // Every measurement of a matrix (all when fingerprint is empty), oldest first.
  std::vector<Measurement> measurements(const std::string& fingerprint = "") const;

  Stats stats() const;

  // SQLite's full integrity check of the file: "ok", or what is wrong.
  std::string integrity_check() const;

  // Copies every row of another database file into this one; returns how many were new.
  std::int64_t merge(const std::string& other_path);

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace sparsetune::db
