#include "search/pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "codegen/emit.hpp"
#include "codegen/launch_plan.hpp"
#include "core/memory.hpp"
#include "io/safetensors.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/nvrtc.hpp"
#include "runtime/thread_pool.hpp"
#include "search/failure.hpp"

namespace sparsetune::search {

Prepared prepare_candidate(const graph::Graph& g, const Csr64& a, const std::string& dtype,
                           const std::string& arch, std::int64_t max_len, const SourceEdit& edit,
                           std::int64_t spmm_n, const std::string& layout) {
  const auto t0 = std::chrono::steady_clock::now();
  Prepared p;
  try {
    const auto since = [](std::chrono::steady_clock::time_point t) {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    };
    codegen::EmitOptions opt;
    opt.design.dtype = dtype;
    if (g.op == "spmm") opt.layout = layout;
    auto e = codegen::generate(g, a, opt);
    if (edit) edit(g, e.kernels.source);
    p.design_s = since(t0);
    const auto t1 = std::chrono::steady_clock::now();
    runtime::CompileOptions co;
    co.arch = arch;
    const runtime::KernelCache cache;
    const auto c = runtime::compile({"candidate", e.kernels.source}, co, &cache);
    p.compile_s = since(t1);
    const auto t2 = std::chrono::steady_clock::now();
    const auto plan = codegen::make_launch_plan(e.format, e.kernels, g.name, {},
                                                e.format.op == "spmm" ? spmm_n : 1);
    p.plan_bytes = io::serialize_safetensors(codegen::plan_file(plan, c.cubin, max_len));
    p.plan_s = since(t2);
    p.ok = true;
  } catch (const std::exception& ex) {
    p.failure = ex.what();
    p.category = failure_category(ex);
  }
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return p;
}

nlohmann::json StageSeconds::to_json(unsigned threads) const {
  return {{"prepared", prepared},           {"measured_ok", measured},
          {"design_thread_s", design},      {"compile_thread_s", compile},
          {"plan_thread_s", plan},          {"measure_s", measure},
          {"worker_setup_s", worker_setup}, {"worker_check_s", worker_check},
          {"worker_timed_s", worker_timed}, {"preparing_threads", threads}};
}

unsigned design_slots(std::int64_t rows, std::int64_t nnz) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const double entries = static_cast<double>(nnz) + static_cast<double>(rows);
  const double per_design = 64.0 * entries + (64 << 20);
  // The matrix itself (CSR, 16 bytes per entry) and the measuring side stay resident.
  const double free = physical_memory_bytes() * 0.75 - 16.0 * entries;
  if (!(free > 0)) return 1;
  const double fit = std::floor(free / per_design);
  return static_cast<unsigned>(std::clamp(fit, 1.0, static_cast<double>(cores)));
}

int pipeline_batch(std::int64_t rows, std::int64_t nnz) {
  return static_cast<int>(std::max(4u, design_slots(rows, nnz)));
}

std::size_t run_pipeline(std::size_t n, unsigned threads, const std::function<bool(double)>& start,
                         const std::function<Prepared(std::size_t)>& prepare,
                         const std::function<void(std::size_t, Prepared&)>& consume,
                         PipelineTimes* times) {
  if (n == 0) return 0;
  PipelineTimes local;
  PipelineTimes& t = times ? *times : local;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::optional<Prepared>> ready(n);
  std::vector<bool> skipped(n, false);
  bool stopped = false;
  std::size_t started = 0, consumed = 0;
  const std::size_t window = std::max<std::size_t>(
      4, 2 * std::size_t{threads ? threads : std::max(1u, std::thread::hardware_concurrency())});
  std::thread producer([&] {
    runtime::parallel_for(
        static_cast<std::int64_t>(n),
        [&](std::int64_t i) {
          {
            std::unique_lock lock(mu);
            // At most two plans per thread (four at least) wait for their measurement: a long batch
            // of large candidates would otherwise hold them all in memory. Items are taken in
            // order, so the one the consumer waits for is never held back here.
            cv.wait(lock,
                    [&] { return stopped || static_cast<std::size_t>(i) < consumed + window; });
            // Until this item is consumed: its preparation, then the measurements of the items
            // ahead of it that are not consumed yet, then its own.
            const double need = t.prepare + t.consume * static_cast<double>(started - consumed + 1);
            if (stopped || !start(need)) {
              stopped = true;
              skipped[i] = true;
              cv.notify_all();
              return;
            }
            ++started;
          }
          Prepared p = prepare(static_cast<std::size_t>(i));
          std::lock_guard lock(mu);
          t.prepare = std::max(t.prepare, p.seconds);
          ready[i] = std::move(p);
          cv.notify_all();
        },
        threads);
  });
  auto finish = [&] {
    {
      std::lock_guard lock(mu);
      stopped = true;  // nothing more starts once the consumer has stopped
    }
    cv.notify_all();
    producer.join();
  };
  try {
    for (std::size_t i = 0; i < n; ++i) {
      Prepared p;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return ready[i].has_value() || skipped[i]; });
        if (skipped[i]) break;
        p = std::move(*ready[i]);
        ready[i].reset();  // a plan is freed as soon as it is measured
      }
      const auto t0 = std::chrono::steady_clock::now();
      consume(i, p);
      const double took =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::lock_guard lock(mu);
      t.consume = std::max(t.consume, took);
      ++consumed;
      cv.notify_all();
    }
  } catch (...) {
    finish();
    throw;
  }
  finish();
  return consumed;
}

}  // namespace sparsetune::search
