#pragma once
// Internal to lib/runtime: the measuring protocol shared by the cuSPARSE baselines and launch
// plans. Two measurements of the same operation, both with CUDA events on one stream:
//   flushed: each run timed alone after an untimed write of a buffer twice the L2 size, so no
//            input stays in L2 (the median of these is what every report calls the time);
//   warm:    batches of back-to-back runs with no flush, each batch timed as a whole, a run's
//            time being its batch's over the runs in it (how published SpMV harnesses time).
#include <cuda_runtime.h>

#include <functional>
#include <string>

#include "runtime/cuda_util.hpp"
#include "runtime/stats.hpp"

namespace sparsetune::runtime {

inline constexpr int kWarmupRuns = 3;

// Where a measurement runs: ops are queued on `stream`; `flush` is written before flushed runs.
struct TimingSetup {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  const DeviceMem* flush = nullptr;
};

struct Timing {
  Stats flushed_ms;
  WarmStats warm_ms;  // warm_ms.per_run.count == 0 when no warm batch was asked for
};

// What every measuring job holds: device 0's properties, a non-blocking stream, two events and
// the L2 flush buffer (twice the L2 size, at least 64 MiB: writing all of it evicts every input).
// Without a usable device the constructor throws Error with the reason, then `need`.
struct TimedStream {
  cudaDeviceProp prop{};
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  DeviceMem flush;

  explicit TimedStream(const std::string& need = "");
  ~TimedStream();
  TimedStream(const TimedStream&) = delete;
  TimedStream& operator=(const TimedStream&) = delete;

  TimingSetup timing() const { return {stream, start, stop, &flush}; }
};

// Milliseconds between two events around what `op` queues on the stream.
double time_once(const TimingSetup& t, const std::function<void()>& op);

// `warmup` untimed runs, `runs` flushed runs, then `warm_batches` batches of back-to-back runs,
// `runs` each unless the operation is slow (warm_runs_per_batch); none: warm_ms stays empty.
// Throws CudaError for a fault.
Timing time_op(const TimingSetup& t, const std::function<void()>& op, int runs,
               int warmup = kWarmupRuns, int warm_batches = kWarmBatches);

}  // namespace sparsetune::runtime
