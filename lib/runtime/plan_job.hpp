#pragma once
// The worker's "plan" job: runs a launch plan (launch_plan.hpp) with the measuring protocol of
// the cuSPARSE baselines and checks its output against the plan's fp64 reference.
//   request {"job": "plan", "plan": PATH, "inputs": [PATH, ...], "cubin": PATH, "runs": N,
//            "time_groups": [[launch, ...], ...] (optional)}
//     inputs: files of further buffers (x, y_ref) shared by many plans; cubin: when the plan
//     holds none
//   reply   {"result": {...}}: the fields of a baseline result (bench.hpp's BaselineResult);
//     with time_groups and a verified run, "group_times_ms": each group's launches timed alone
//     (L2 flushed, median), in the order asked
// Throws Error for a malformed plan, CudaError for a CUDA failure (the worker then exits).
#include <nlohmann/json.hpp>

namespace sparsetune::runtime {

nlohmann::json plan_job(const nlohmann::json& req);

}  // namespace sparsetune::runtime
