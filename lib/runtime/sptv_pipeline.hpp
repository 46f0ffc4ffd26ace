#pragma once
// Alg. 1 of IAP-SpTV (HTF-based pipeline SpTV) as worker jobs. The tensor's format lives in
// pinned host memory; each slice format's batches (SLICE_DIV parts, graph/sptv_graph.hpp) are
// spread over n streams: a batch's arrays are copied to the device asynchronously on its stream,
// into that stream's reused buffer, and its kernels run there, so copies of one batch overlap the
// kernels of another. Formats run one after another (a device synchronization between them). y
// comes back batch by batch when every group gives "y_spans" (per batch, runs [lo, hi) of y that
// hold every entry it writes), each copy on the batch's stream after its kernels (Alg. 1, line
// 20); else in one copy at the end. Device memory holds v, y and one buffer per stream sized
// to its largest batch, so a tensor larger than the GPU's memory streams through.
//
//   request {"job": "pipeline", "plan": PATH, "inputs": [PATH...], "runs": N,
//            "groups": [{"streams": n, "batches": [[launch index, ...], ...],
//                        "y_spans": [[[lo, hi], ...], ...]}, ...]}   (y_spans optional)
//     the launch plan (runtime/launch_plan.hpp) of the batched format; one group per format, in
//     order; every launch in exactly one batch
//   reply   {"result": {"verified", "error", "tolerance", "unwritten", "time_ms": {median, min,
//            max}, "device_bytes", "streams": [n per group], "y_back": "per batch" or
//            "at the end"}}: wall time from the pinned host arrays to y on the host, the fp64
//            check of the first run
//   request {"job": "stream_overhead"}
//   reply   {"lambda_us", "h2d_gbs", "d2h_gbs", "samples": [[n, µs], ...]}
#include <nlohmann/json.hpp>

namespace sparsetune::runtime {

nlohmann::json pipeline_job(const nlohmann::json& req);
nlohmann::json stream_overhead_job(const nlohmann::json& req);

}  // namespace sparsetune::runtime
