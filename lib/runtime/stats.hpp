#pragma once
// Measurement arithmetic that needs no GPU: summaries of repeated timings, the fewest bytes and
// the flops an operation must move and do, and the error tolerance of each data type.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sparsetune::runtime {

// Summary of repeated timings (any unit): median and spread.
struct Stats {
  std::int64_t count = 0;
  double median = 0.0;
  double min = 0.0;
  double max = 0.0;
  double q1 = 0.0;  // 25th percentile, linear interpolation between order statistics
  double q3 = 0.0;  // 75th percentile
  double iqr() const { return q3 - q1; }
};

// Throws Error on an empty sample or a non-finite value.
Stats summarize(std::vector<double> samples);

// Warm timing (runtime/timing.hpp): kWarmBatches batches of back-to-back runs with no flush, each
// batch timed as a whole and holding as many runs as the flushed measurement times one by one. A
// run's time is its batch's time over the runs in it; the spread is over batches.
inline constexpr int kWarmBatches = 5;

struct WarmStats {
  Stats per_run;  // of batch time / runs_per_batch; per_run.count is the number of batches
  std::int64_t runs_per_batch = 0;
};

// Runs per warm batch: as many as the flushed measurement timed (`runs`), fewer for slow
// operations so that all batches together stay near kWarmBudgetMs (at least one run each). A run
// that takes milliseconds has no launch gap worth amortising, and a slow candidate must not run
// into the worker's watchdog because of the warm batches.
inline constexpr double kWarmBudgetMs = 1000.0;
std::int64_t warm_runs_per_batch(std::int64_t runs, double flushed_median_ms, int batches);

// `batch_times` holds one total per batch of `runs_per_batch` runs (any unit). Throws Error on no
// batches, a non-finite total or runs_per_batch < 1.
WarmStats summarize_warm(const std::vector<double>& batch_times, std::int64_t runs_per_batch);

enum class DType { f16, f32, f64 };
DType parse_dtype(const std::string& name);  // "f16" | "f32" | "f64", else Error
std::string dtype_name(DType t);
int dtype_bytes(DType t);
double unit_roundoff(DType t);  // 2^-11, 2^-24, 2^-53

// Work and traffic of one operation: flops and the fewest bytes it must move.
struct OpCost {
  double flops = 0.0;
  double bytes = 0.0;
};

// y = A·x with A in CSR (row pointers and column indices of idx_bytes each): matrix arrays read
// once, x read once, y written once.
OpCost spmv_cost(std::int64_t rows, std::int64_t cols, std::int64_t nnz, int idx_bytes,
                 int val_bytes);
// C = A·B with B (cols × n) read once and C (rows × n) written once; C's values are out_bytes
// each (0: val_bytes; f16 SpMM writes an fp32 C).
OpCost spmm_cost(std::int64_t rows, std::int64_t cols, std::int64_t nnz, std::int64_t n,
                 int idx_bytes, int val_bytes, int out_bytes = 0);
// Y = X ×_mode v: every entry's coordinates and value read once, v read once, one output value
// written per non-empty fiber.
OpCost sptv_cost(int order, std::int64_t nnz, std::int64_t mode_dim, std::int64_t fibers,
                 int idx_bytes, int val_bytes);

double gflops(const OpCost& c, double seconds);
double gbytes_per_s(const OpCost& c, double seconds);

// Largest relative L2 error accepted for a result whose longest dot product has `max_len` terms.
// Inputs are rounded to the data type before the fp64 reference is computed, so only the
// accumulation error remains: at most about sqrt(len)·u for random-sign terms, with a factor 16
// of headroom, and never below the design's floors (f16 1e-2, f32 1e-5, f64 1e-12). f16 data is
// accumulated in f32 and rounded once to f16.
double error_tolerance(DType t, std::int64_t max_len);
// For f32 data multiplied on tensor cores in TF32 (10-bit mantissa inputs, f32 accumulation), as
// cuSPARSE's Blocked-ELL SpMM does: 16·sqrt(len)·2^-11.
double error_tolerance_tf32(std::int64_t max_len);

// A computed output checked against its fp64 reference: NaN entries count as unwritten (outputs
// are poisoned with NaN before a checking run), and the result is verified only when every entry
// was written and the relative L2 error is finite and within the tolerance. Where the reference
// is NaN or infinite (an x holding them), y must hold the same special value, and the error is
// that of the finite entries.
struct OutputCheck {
  double error = 0;
  double tolerance = 0;
  std::int64_t unwritten = 0;
  std::int64_t specials_wrong = 0;  // NaN or infinite in the reference, but not the same in y
  bool verified() const;
};
OutputCheck check_output(const std::vector<double>& y, const std::vector<double>& ref,
                         double tolerance);

// The fields every measured result reports: status, verification, time statistics in ms, rates
// from the fewest bytes of `cost`, and a note.
nlohmann::json result_json(const OutputCheck& check, const Stats& time_ms, const OpCost& cost,
                           const std::string& note);
// The same, with the warm measurement as the object "warm" (warm_json); every other field is the
// L2-flushed measurement, exactly as above.
nlohmann::json result_json(const OutputCheck& check, const Stats& time_ms, const WarmStats& warm_ms,
                           const OpCost& cost, const std::string& note);

// The "warm" object from per-run times in ms: median_us, min_us, max_us, gflops and gbs (of the
// median), batches, runs_per_batch, and bw_fraction, null here: the measuring worker does not
// know the device's bandwidth, the parent fills it in (runtime/bench.hpp).
nlohmann::json warm_json(const WarmStats& warm_ms, const OpCost& cost);

}  // namespace sparsetune::runtime
