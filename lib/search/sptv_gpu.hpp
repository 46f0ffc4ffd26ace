#pragma once
// The GPU side of `tune --op sptv`, through the worker process (no CUDA here): the emitted
// kernels run device-resident and are checked against the fp64 SpTV reference; then Alg. 1's
// pipeline runs a batched design of the same slice formats from pinned host memory, with the
// stream count of the model (eq. (20)-(24), λ and the copy bandwidths measured once per device
// and cached) beside the measured best count.
#include <array>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "codegen/emit.hpp"
#include "codegen/launch_plan.hpp"
#include "core/sptv_matrix.hpp"
#include "core/tensor.hpp"
#include "graph/sptv_graph.hpp"
#include "runtime/worker.hpp"

namespace sparsetune::search {

// The v of every SpTV check: deterministic, rounded to the value type, no zero.
std::vector<double> sptv_check_v(std::int64_t n, const std::string& dtype);

// The plan's launches of each SLICE_DIV branch 0 .. branches-1 (a part's path starts with its
// branch), in part order; a branch without work has none.
std::vector<std::vector<std::size_t>> branch_launches(const graph::Format& f,
                                                      const codegen::SpmvPlan& plan, int branches);

// Per SLICE_DIV branch 0 .. branches-1, the rows of y its parts write as ascending runs [lo, hi),
// for the pipeline's copies of y back batch by batch: a run goes on over a gap of up to
// `merge_gap` rows of other branches (one copy more costs more than that many bytes). Empty when
// a part does not list its rows.
std::vector<std::vector<std::array<std::int64_t, 2>>> branch_y_runs(const graph::Format& f,
                                                                    int branches,
                                                                    std::int64_t merge_gap);

// Per slice format: the bytes its parts move to the device and back, and the model's stream
// count with assumed constants (PCIe 25 GB/s, device 2000 GB/s, λ = 10 µs), which it names.
nlohmann::json assumed_stream_model(const graph::Format& f, const std::string& dtype);

struct SptvGpuInput {
  const codegen::Emitted& emitted;  // the unbatched design
  const SparseTensor& tensor;
  const SptvMatrix& view;
  const std::vector<graph::SliceFormat>& format_of_slice;
  int hyb_width = 4;
  int coo_block_nnz = 0;  // the design's COO graph (SptvDesign::coo_block_nnz)
  std::string dtype;
  std::int64_t max_len = 1;
  runtime::WorkerLaunch launch;
  const codegen::PlanInputs* inputs = nullptr;  // sptv_plan_inputs' answer, if already made
  // sptv_device_run's answer for this design, if already measured: not run again.
  const nlohmann::json* device_run = nullptr;
  // Called once the worker has found a device, before anything runs on it: the search starts
  // designing its next designs on host threads then (and not on a machine without a GPU).
  std::function<void()> on_device = nullptr;
  // The design's Optimizer options: the pipeline's batched cuts of it are optimized the same
  // way (24-bit column words among them), so they send the bytes the design stores.
  codegen::OptimizerOptions optimizer;
};

// The v of the checks and the fp64 reference in the view's order, for the plan files.
codegen::PlanInputs sptv_plan_inputs(const SparseTensor& tensor, const SptvMatrix& view,
                                     const std::string& dtype, std::int64_t max_len);

// One design run device-resident (20 timed runs, verified): the plan job's result with "ran":
// true, or {"ran": false, "note"} without a GPU or when it fails. Sets *arch to the device's.
nlohmann::json sptv_device_run(const codegen::Emitted& e, const codegen::PlanInputs& inputs,
                               const runtime::WorkerLaunch& launch, std::string* arch,
                               const std::function<void()>& on_device = {});

// {"ran": false, "note"} without a GPU; else the device-resident result ("verified", "error",
// "time_ms", ...) with "pipeline": {"lambda_us", "h2d_gbs", "d2h_gbs", "from_cache", "model",
// "measured": [{"batches", "streams", "y_back", "time_ms", "verified"}], "best_measured_batches",
// "best_measured_streams", "best_measured_ms", "alg1_best_streams", "alg1_best_ms" (the best of
// Alg. 1's 16 batches per format, which the model's stream counts are judged against),
// "model_run"}. Sets *arch to the device's.
nlohmann::json sptv_gpu_runs(const SptvGpuInput& in, std::string* arch);

}  // namespace sparsetune::search
