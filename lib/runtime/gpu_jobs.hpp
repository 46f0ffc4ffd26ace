#pragma once
// The worker's GPU jobs (CUDA and cuSPARSE live behind this line):
//   "device"   {bandwidth: bool}           -> {device: {...}} (+ measured bandwidth)
//   "load"     {path, kind, op, dtype, seed, mode, sptv_cubin}  -> {rows, cols, nnz, max_len}
//   "baseline" {name, n, runs}             -> {result: {...}} (see BaselineResult in bench.hpp)
//   "kernel"   {cubin, kernel, n}          -> {sum, written}: launches kernel(float* out, long long
//                                              n) on n outputs; for tests of fault isolation
//   "plan"     {plan, inputs, cubin, runs} -> {result: {...}}: a launch plan (plan_job.hpp)
// Throws Error for a job's failure; sets *fatal when the CUDA context may be unusable.
#include <nlohmann/json.hpp>
#include <string>

namespace sparsetune::runtime {

nlohmann::json handle_gpu_job(const std::string& job, const nlohmann::json& req, bool* fatal);

}  // namespace sparsetune::runtime
