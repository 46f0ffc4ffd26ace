#pragma once
// Internal to lib/runtime: the measuring protocol shared by the cuSPARSE baselines and launch
// plans. Two measurements of the same operation, both with CUDA events on one stream:
//   flushed: each run timed alone after an untimed write of a buffer twice the L2 size, so no
//            input stays in L2 (the median of these is what every report calls the time);
//   warm:    batches of back-to-back runs with no flush, each batch timed as a whole, a run's
//            time being its batch's over the runs in it (how published SpMV harnesses time).
#include <cuda_runtime.h>

#include <functional>

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

// A buffer of twice the L2 size (at least 64 MiB): writing all of it evicts every input.
DeviceMem l2_flush_buffer(const cudaDeviceProp& prop);

// Milliseconds between two events around what `op` queues on the stream.
double time_once(const TimingSetup& t, const std::function<void()>& op);

// `warmup` untimed runs, `runs` flushed runs, then `warm_batches` batches of back-to-back runs,
// `runs` each unless the operation is slow (warm_runs_per_batch); none: warm_ms stays empty.
// Throws CudaError for a fault.
Timing time_op(const TimingSetup& t, const std::function<void()>& op, int runs,
               int warmup = kWarmupRuns, int warm_batches = kWarmBatches);

}  // namespace sparsetune::runtime
