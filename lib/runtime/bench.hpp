#pragma once
// The cuSPARSE baselines of one matrix or tensor, measured in a worker process. The parent
// (this code) never touches CUDA: it compiles with NVRTC, hands the problem over in a file, asks
// for each baseline in turn, and records a worker's crash or hang as that baseline's failure.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/matrix.hpp"
#include "core/tensor.hpp"
#include "runtime/stats.hpp"
#include "runtime/worker.hpp"

namespace sparsetune::runtime {

struct BenchOptions {
  std::string op = "spmv";             // spmv | spmm | sptv
  std::vector<std::int64_t> n = {32};  // SpMM dense columns (one row of results per n)
  int mode = 0;                        // SpTV mode
  DType dtype = DType::f32;
  int runs = 20;  // timed runs per baseline (at least 20 for reported numbers)
  std::uint64_t seed = 1;
  double timeout_s = 600;  // watchdog per job: the worker is killed past it
  WorkerLaunch launch = self_worker_launch();
};

// What the worker reports of the GPU, with the measured device-to-device copy bandwidth.
struct DeviceModel {
  std::string name, arch;
  int sms = 0;
  std::int64_t l2_bytes = 0, smem_per_block = 0, smem_per_sm = 0, memory_bytes = 0;
  double bandwidth_gbs = 0.0;  // bytes read + written by a large copy over its median time
};

// The warm measurement of a result (runtime/timing.hpp): batches of back-to-back runs with no L2
// flush, a run's time being its batch's over the runs in it; median, min and max over batches.
struct WarmResult {
  bool measured = false;  // false when the result carries no "warm" object
  double median_us = 0, min_us = 0, max_us = 0;
  double gflops = 0, gbs = 0;     // of the median, from the fewest bytes
  double bandwidth_fraction = 0;  // gbs / measured device bandwidth; 0 when that is unknown
  std::int64_t batches = 0, runs_per_batch = 0;
};

// Reads a result's "warm" object (as result_json writes it); bandwidth_fraction from
// `bandwidth_gbs`. A missing or null object gives measured == false.
WarmResult warm_from_json(const nlohmann::json& warm, double bandwidth_gbs);
// The "warm" object of a report: median_us, min_us, max_us, gflops, gbs, bw_fraction (null when
// the bandwidth is unknown), batches, runs_per_batch; null when nothing was measured.
nlohmann::json to_json(const WarmResult& w);

struct BaselineResult {
  std::string name;
  std::int64_t n = 1;
  std::string dtype;
  std::string status;  // ok | failed (fault, hang, error) | unsupported | skipped
  bool verified = false;
  double error = -1.0;  // relative L2 error against the fp64 reference; -1 when none
  double tolerance = 0.0;
  Stats time_ms;    // L2 flushed before each run: the time every ranking and speedup uses
  WarmResult warm;  // back-to-back runs, no flush
  double preprocess_ms = -1.0;  // one timed preprocess call; -1 when the baseline has none
  // SpTV: H2D of the baseline's arrays and v from pinned memory, the op, D2H of y (count 0: not
  // measured), the paper's setting, to compare with HTF's pipeline.
  Stats with_transfers_ms;
  std::int64_t h2d_bytes = 0, d2h_bytes = 0;  // what those runs copied
  double gflops = 0.0, gbs = 0.0;
  double bandwidth_fraction = 0.0;  // gbs / measured device bandwidth
  std::string note;                 // format details, or why it failed or was left out
};

struct BenchReport {
  std::string op;
  std::int64_t rows = 0, cols = 0, nnz = 0;  // a tensor's: its mode's size, 0 and its entries
  std::vector<std::int64_t> dims;            // a tensor's sizes (empty for a matrix)
  int mode = 0;
  DeviceModel device;
  std::vector<BaselineResult> results;
  int worker_starts = 0;
};

// The baselines run for an operation, in order.
std::vector<std::string> baseline_names(const std::string& op);

// Throws Error when no worker can reach a GPU ("no CUDA device: bench needs a GPU").
BenchReport bench_matrix(const Csr64& a, const BenchOptions& opts);
BenchReport bench_tensor(const SparseTensor& t, const BenchOptions& opts);

nlohmann::json to_json(const BenchReport& r);

// Highest GFLOP/s among verified results, flushed or warm; 0 when none is verified (and measured).
double best_verified_gflops(const std::vector<BaselineResult>& results, bool warm);
DeviceModel device_model_from_json(const nlohmann::json& j);
BaselineResult baseline_from_json(const nlohmann::json& j, double bandwidth_gbs);

}  // namespace sparsetune::runtime
