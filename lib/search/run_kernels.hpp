#pragma once
// Running generated kernels on the GPU: a format and its kernel source become a launch plan
// (codegen/launch_plan.hpp), NVRTC compiles the kernels for the device, and the runtime's worker
// measures and checks them (the "plan" job) exactly as it measures the cuSPARSE baselines.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/bench.hpp"
#include "runtime/worker.hpp"

namespace sparsetune::search {

struct RunOptions {
  int runs = 20;            // timed runs
  std::uint64_t seed = 1;   // of the random x
  double timeout_s = 600;   // watchdog per worker job
  std::string x_file;       // x from a file instead of random (read_vector_file)
  std::string matrix_file;  // the reference from this matrix instead of the format's own arrays
  double alpha = 1.0;       // y = alpha A x + beta y; with beta != 0, y starts random (seed + 1)
  double beta = 0.0;
  // SpMM folders: the columns of the random B (0: the n the folder's report.json was tuned for,
  // else 16); SpMV: 0 or 1.
  std::int64_t n = 0;
  // SpMM folders: "row" or "col", checked against the layout the kernels were generated for
  // (the format binary's); empty: the folder's. Another op with a layout is an error.
  std::string layout;
  runtime::WorkerLaunch launch = runtime::self_worker_launch();
};

struct RunResult {
  runtime::DeviceModel device;
  runtime::BaselineResult result;  // time, GFLOP/s, GB/s, fraction of bandwidth, error, verified
  std::string graph, dtype, reference;
  std::int64_t rows = 0, cols = 0, nnz = 0;
  std::string op = "spmv";
  std::int64_t n = 1;          // SpMM: the columns of B
  std::string layout = "row";  // SpMM: B's and C's layout (the format's)
  int launches = 0;
  double alpha = 1.0, beta = 0.0;
  double compile_ms = 0;
  bool cubin_from_cache = false;
};

// The n an SpMM folder was tuned for, as its report.json records it (its kernels' column tiles
// were chosen for that B): run's default --n. 16 when the report is missing or says nothing
// usable.
std::int64_t tuned_n(const std::filesystem::path& dir);

// The most columns of B that run --n takes (and that tuned_n reads back from a report).
inline constexpr std::int64_t kMaxRunN = std::int64_t{1} << 20;

// Runs DIR/format.safetensors with DIR/kernel.cu (what emit-kernel and tune write). Throws Error
// with "no CUDA device (...)" when there is no GPU, and for unreadable or inconsistent inputs. A
// kernel's fault or hang is its result's failure (status "failed"), not an exception.
RunResult run_emitted(const std::string& dir, const RunOptions& o);

nlohmann::json to_json(const RunResult& r);

// A dense vector: raw little-endian doubles when the name ends in ".f64" (emit-kernel
// --reference writes x.f64); else whitespace-separated numbers, '%' comment lines, optionally a
// Matrix Market array header ("%%MatrixMarket matrix array real general" and a "n 1" size line).
// Throws InputError naming the line of a bad value.
std::vector<double> read_vector_file(const std::string& path);

}  // namespace sparsetune::search
