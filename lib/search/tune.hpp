#pragma once
// `tune`: one matrix in, the fastest format and kernel found out. Reads the matrix, answers from
// the tuning database when this matrix was tuned on this device before (unless forced), else
// searches (on the GPU through the worker; when there is none or the budget is 0, on the learned
// ranking of the architecture, or the cost model where no current one exists), records every scored
// candidate, checks the winner on the CPU against the fp64 reference, compiles it with NVRTC, and
// writes DIR/format.safetensors, kernel.cu, kernel.h, graph.json and report.json.
#include <atomic>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/worker.hpp"
#include "search/engine.hpp"
#include "search/pipeline.hpp"
#include "search/spmm_seeds.hpp"

namespace sparsetune::search {

// The most columns of B that tune --op spmm (and collect, which tunes) takes.
inline constexpr std::int64_t kMaxSpmmN = 1024;

struct TuneOptions {
  std::string matrix;       // .mtx, .mtx.gz or matrix container
  std::string op = "spmv";  // spmv | spmm (sptv: search/sptv_tune.hpp)
  std::int64_t n = 1;       // spmm: the columns of B (1 to kMaxSpmmN); spmv: 1
  // spmm: the layout of B and C the emitted kernels are compiled for, "row" or "col" (an emit
  // option: the search ranks designs of A, which do not depend on it; the winner's kernels, the
  // CPU check, kernel.h, the format binary and report.json follow it). spmv: "row".
  std::string layout = "row";
  std::string dtype = "f64";  // f64 | f32
  std::string out_dir;        // "": <matrix name>.tuned in the current folder
  double budget_s = 60;       // 0: predict only (cost model, no GPU)
  int max_candidates = 0;     // 0: the budget alone (predict only: 64)
  // SpMV with a budget: MatXtract's crux search (Bayesian optimisation over the tensor-core
  // split) after the graph search, in the last `crux_share` of its time, at most this many
  // points (0: none).
  int crux_evaluations = 20;
  double crux_share = 0.2;
  std::uint64_t seed = 1;
  std::string db_path;  // "": TuningDb::default_path()
  bool force = false;   // search even when the database has an answer
  // Rank measured candidates by their warm median (back-to-back calls, the matrix kept in L2 where
  // it fits: an iterative solver's calls) instead of the flushed one (a single call). The
  // database keeps flushed times either way, so a warm tune always searches.
  bool rank_warm = false;
  std::string family;  // recorded with the run: SuiteSparse group, generator kind, ...
  // With a GPU, a matrix of more entries than this is searched on a row sample of about
  // screen_sample entries and its best candidates confirmed on the full matrix (0: never).
  std::int64_t screen_above = 4'000'000;
  std::int64_t screen_sample = 1'000'000;
  std::string config_dir;  // "": default_search_config_dir()
  std::string graphs_dir;  // "": default_graphs_dir()
  bool use_gpu = true;     // false: never start a worker
  // Design and compile every candidate on the full matrix as a GPU run does, but score it by the
  // cost model (no GPU; measures the search's CPU side). The budget still applies.
  bool compile_only = false;
  SourceEdit edit_source;  // for tests: edits each candidate's kernel source before NVRTC
  runtime::WorkerLaunch launch = runtime::self_worker_launch();
  std::string arch;  // NVRTC target without a GPU ("": sm_90)
  // Rank by the learned model of the architecture when one is there and current (else, or when
  // false, by the cost model); models_dir "": default_models_dir().
  bool learned = true;
  std::string models_dir;
  const std::atomic<bool>* stop = nullptr;
  std::function<void(const Progress&)> progress;
};

struct TuneOutcome {
  nlohmann::json report;  // also written as report.json
  std::string out_dir;
  std::vector<std::string> files;
};

TuneOutcome tune(const TuneOptions& o);

// A matrix's name from its path: the file name without .gz, .mtx and .safetensors.
std::string matrix_name(const std::string& path);

// "<name>.tuned" for a matrix path: the file name without .gz and .mtx.
std::string default_out_dir(const std::string& matrix);

}  // namespace sparsetune::search
