#include "runtime/timing.hpp"

#include <algorithm>
#include <vector>

#include "runtime/device.hpp"

namespace sparsetune::runtime {

TimedStream::TimedStream(const std::string& need) {
  const std::string why = device_status();
  if (!why.empty()) throw Error(why + need);
  SPARSETUNE_CUDA(cudaSetDevice(0));
  SPARSETUNE_CUDA(cudaGetDeviceProperties(&prop, 0));
  SPARSETUNE_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  SPARSETUNE_CUDA(cudaEventCreate(&start));
  SPARSETUNE_CUDA(cudaEventCreate(&stop));
  flush = DeviceMem(
      std::max<std::size_t>(2 * static_cast<std::size_t>(prop.l2CacheSize), std::size_t{64} << 20));
}

TimedStream::~TimedStream() {
  if (start) cudaEventDestroy(start);
  if (stop) cudaEventDestroy(stop);
  if (stream) cudaStreamDestroy(stream);
}

double time_once(const TimingSetup& t, const std::function<void()>& op) {
  SPARSETUNE_CUDA(cudaEventRecord(t.start, t.stream));
  op();
  SPARSETUNE_CUDA(cudaEventRecord(t.stop, t.stream));
  SPARSETUNE_CUDA(cudaEventSynchronize(t.stop));
  cuda_check(cudaGetLastError(), "timed run");
  float ms = 0.f;
  SPARSETUNE_CUDA(cudaEventElapsedTime(&ms, t.start, t.stop));
  return static_cast<double>(ms);
}

Timing time_op(const TimingSetup& t, const std::function<void()>& op, int runs, int warmup,
               int warm_batches) {
  if (runs < 1) throw Error("at least one timed run is needed");
  if (!t.flush || !t.flush->get()) throw Error("no L2 flush buffer to time with");
  for (int i = 0; i < warmup; ++i) op();
  SPARSETUNE_CUDA(cudaStreamSynchronize(t.stream));
  cuda_check(cudaGetLastError(), "warm-up");

  Timing out;
  std::vector<double> ms;
  ms.reserve(runs);
  for (int i = 0; i < runs; ++i) {
    // Untimed: the write evicts whatever the previous run left in L2.
    SPARSETUNE_CUDA(cudaMemsetAsync(t.flush->get(), i & 0xff, t.flush->bytes(), t.stream));
    ms.push_back(time_once(t, op));
  }
  out.flushed_ms = summarize(std::move(ms));
  if (warm_batches < 1) return out;

  // No flush from here on: the last flushed run has just read the inputs into L2.
  const std::int64_t per_batch = warm_runs_per_batch(runs, out.flushed_ms.median, warm_batches);
  std::vector<double> batch_ms;
  batch_ms.reserve(warm_batches);
  for (int b = 0; b < warm_batches; ++b)
    batch_ms.push_back(time_once(t, [&] {
      for (std::int64_t i = 0; i < per_batch; ++i) op();
    }));
  out.warm_ms = summarize_warm(batch_ms, per_batch);
  return out;
}

}  // namespace sparsetune::runtime
