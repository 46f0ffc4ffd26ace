#pragma once
// λ of IAP-SpTV's stream model (§5.2): what one more CUDA stream costs, measured once per device
// (runtime/sptv_pipeline.hpp's "stream_overhead" job) and cached in a small JSON file keyed by the
// device, with the host-device copy bandwidths measured alongside. No CUDA here.
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sparsetune::runtime {

struct StreamOverhead {
  double lambda_us = 0;  // slope of (create n streams, launch on each, synchronize) in n
  double h2d_gbs = 0;    // pinned host -> device
  double d2h_gbs = 0;    // device -> pinned host
};

// Least-squares slope of time (µs) over stream count; 0 with fewer than two distinct counts.
// Never negative.
double fit_lambda(const std::vector<std::pair<int, double>>& samples_us);

// $SPARSETUNE_CACHE_DIR, else $XDG_CACHE_HOME/sparsetune, else ~/.cache/sparsetune, then
// /stream-overhead.json.
std::string stream_overhead_cache_path();

// The cached measurement of `device` ("" when none, or when the file is unreadable: a cache
// never stops a run). `path` "": stream_overhead_cache_path().
std::optional<StreamOverhead> cached_stream_overhead(const std::string& device,
                                                     const std::string& path = "");
// Adds or replaces `device`'s entry, writing the file atomically; false when it cannot.
bool cache_stream_overhead(const std::string& device, const StreamOverhead& o,
                           const std::string& path = "");

}  // namespace sparsetune::runtime
