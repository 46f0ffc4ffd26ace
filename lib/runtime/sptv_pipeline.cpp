#include "runtime/sptv_pipeline.hpp"

#include <cuda_fp16.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <utility>

#include "runtime/cuda_util.hpp"
#include "runtime/launch_plan.hpp"
#include "runtime/module.hpp"
#include "runtime/nvrtc.hpp"
#include "runtime/stats.hpp"
#include "runtime/stream_overhead.hpp"

namespace sparsetune::runtime {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

class Streams {
 public:
  explicit Streams(int n) : s_(n, nullptr) {
    for (auto& s : s_) SPARSETUNE_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  }
  ~Streams() {
    for (auto s : s_)
      if (s) cudaStreamDestroy(s);
  }
  Streams(const Streams&) = delete;
  Streams& operator=(const Streams&) = delete;
  cudaStream_t operator[](std::size_t i) const { return s_[i]; }

 private:
  std::vector<cudaStream_t> s_;
};

std::size_t aligned(std::size_t n) { return (n + 255) / 256 * 256; }

std::vector<double> to_doubles(const char* raw, std::int64_t count, const std::string& dtype) {
  std::vector<double> out(count);
  for (std::int64_t i = 0; i < count; ++i) {
    if (dtype == "F64") {
      std::memcpy(&out[i], raw + 8 * i, 8);
    } else {
      float f;
      std::memcpy(&f, raw + 4 * i, 4);
      out[i] = f;
    }
  }
  return out;
}

struct Batch {
  std::vector<std::size_t> launches;
  std::vector<std::array<std::int64_t, 2>> y_runs;  // the entries of y it writes lie in these
  std::vector<std::string> buffers;  // the batch's own arrays (x, y and shared inputs excluded)
  std::size_t bytes = 0;             // their bytes, each aligned to 256
};

}  // namespace

nlohmann::json pipeline_job(const nlohmann::json& req) {
  std::vector<std::filesystem::path> inputs;
  if (req.contains("inputs"))
    for (const auto& p : req["inputs"]) inputs.emplace_back(p.get<std::string>());
  const LaunchPlan plan = read_plan(req.at("plan").get<std::string>(), inputs);
  if (plan.cubin.empty()) throw Error("pipeline: the launch plan comes with no cubin");
  if (plan.output_dtype != "F64" && plan.output_dtype != "F32")
    throw Error("pipeline: y must be F64 or F32");
  const int runs = std::max(1, req.value("runs", 10));

  // Groups of batches; every launch in exactly one batch.
  std::vector<std::vector<Batch>> groups;
  std::vector<int> streams_of;
  std::set<std::size_t> seen;
  bool spans = true;  // every batch names its span of y: each copies its part of y back
  for (const auto& g : req.at("groups")) {
    std::vector<Batch> batches;
    const bool has_spans = g.contains("y_spans");
    if (has_spans && g.at("y_spans").size() != g.at("batches").size())
      throw Error("pipeline: y_spans needs one list of [lo, hi) per batch");
    spans = spans && has_spans;
    for (const auto& b : g.at("batches")) {
      Batch batch;
      if (has_spans)
        for (const auto& run : g.at("y_spans").at(batches.size())) {
          const std::array<std::int64_t, 2> r{run.at(0).get<std::int64_t>(),
                                              run.at(1).get<std::int64_t>()};
          if (r[0] < 0 || r[0] > r[1] || r[1] > plan.output_length)
            throw Error("pipeline: a y span lies outside y");
          batch.y_runs.push_back(r);
        }
      std::set<std::string> names;
      for (const auto& l : b) {
        const auto i = l.get<std::size_t>();
        if (i >= plan.launches.size() || !seen.insert(i).second)
          throw Error("pipeline: launch " + std::to_string(i) + " is out of range or repeated");
        batch.launches.push_back(i);
        for (const auto& a : plan.launches[i].args)
          if (a.kind == PlanArg::Kind::Buffer && a.buffer != plan.x && a.buffer != plan.output &&
              a.buffer != plan.output_init && names.insert(a.buffer).second) {
            batch.buffers.push_back(a.buffer);
            batch.bytes += aligned(plan.buffers.at(a.buffer).bytes.size());
          }
      }
      batches.push_back(std::move(batch));
    }
    groups.push_back(std::move(batches));
    streams_of.push_back(std::max(1, g.at("streams").get<int>()));
  }
  if (seen.size() != plan.launches.size())
    throw Error("pipeline: some launches belong to no batch");

  // Pinned host copies of the batches (the user's tensor in page-locked memory), each batch's
  // arrays packed as its device arena holds them: one copy moves a whole batch, however many
  // arrays its formats store (a copy per array would cost more than the arrays on small slices).
  std::vector<std::vector<PinnedMem>> host(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (const auto& b : groups[g]) {
      PinnedMem m(std::max<std::size_t>(b.bytes, 1));
      if (b.bytes) std::memset(m.get(), 0, b.bytes);  // the alignment gaps travel too
      std::size_t at = 0;
      for (const auto& name : b.buffers) {
        const auto& bytes = plan.buffers.at(name).bytes;
        if (!bytes.empty())
          std::memcpy(static_cast<char*>(m.get()) + at, bytes.data(), bytes.size());
        at += aligned(bytes.size());
      }
      host[g].push_back(std::move(m));
    }
  const auto& xb = plan.buffers.at(plan.x).bytes;
  PinnedMem host_x(std::max<std::size_t>(xb.size(), 1));
  if (!xb.empty()) std::memcpy(host_x.get(), xb.data(), xb.size());
  const std::size_t y_bytes =
      static_cast<std::size_t>(plan.output_length) * plan_dtype_size(plan.output_dtype);
  PinnedMem host_y(std::max<std::size_t>(y_bytes, 1));

  // Device: v, y, y's initial value, and one reused buffer per stream.
  int max_streams = 1;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    streams_of[g] = std::min<int>(streams_of[g], std::max<std::size_t>(1, groups[g].size()));
    max_streams = std::max(max_streams, streams_of[g]);
  }
  std::vector<std::size_t> arena_bytes(max_streams, 256);
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (std::size_t b = 0; b < groups[g].size(); ++b)
      arena_bytes[b % streams_of[g]] = std::max(arena_bytes[b % streams_of[g]], groups[g][b].bytes);
  std::vector<DeviceMem> arena;
  std::size_t device_bytes = 0;
  for (auto n : arena_bytes) arena.emplace_back(n), device_bytes += n;
  DeviceMem dx(std::max<std::size_t>(xb.size(), 256)), dy(std::max<std::size_t>(y_bytes, 256));
  device_bytes += dx.bytes() + dy.bytes();
  DeviceMem dinit;
  if (!plan.output_init.empty()) {
    const auto& ib = plan.buffers.at(plan.output_init).bytes;
    dinit = DeviceMem(std::max<std::size_t>(ib.size(), 256));
    dinit.upload(ib.data(), ib.size());
  }
  Streams streams(max_streams);
  Module module(plan.cubin);

  // One run of Alg. 1: v over, y cleared (or reset), then every format's batches over its
  // streams, a synchronization after each format, y back. With spans, each batch copies its span
  // of y back on its stream right after its kernels (Alg. 1, line 20), so the copy overlaps the
  // next batches' copies in. A span may cover rows of another format's slices: a format's
  // copies end before the next format starts (the synchronization), and a row's own batch copies
  // it after every earlier format's copy, so the host keeps each row's final value.
  const std::size_t es = plan_dtype_size(plan.output_dtype);  // bytes of an entry of y
  // SPARSETUNE_PIPELINE_TRACE=FILE: one more run records when each stream reaches each step of
  // each batch (CUDA events) and appends it to FILE as a JSON line: where a pipeline's time goes.
  struct Mark {
    std::string what;
    std::size_t batch;
    int stream;
    cudaEvent_t event;
  };
  std::vector<Mark>* marks = nullptr;
  auto mark = [&](const char* what, std::size_t b, int si, cudaStream_t s) {
    if (!marks) return;
    Mark m{what, b, si, nullptr};
    SPARSETUNE_CUDA(cudaEventCreate(&m.event));
    SPARSETUNE_CUDA(cudaEventRecord(m.event, s));
    marks->push_back(m);
  };
  auto run = [&] {
    const cudaStream_t s0 = streams[0];
    mark("start", 0, 0, s0);
    if (!xb.empty())
      SPARSETUNE_CUDA(
          cudaMemcpyAsync(dx.get(), host_x.get(), xb.size(), cudaMemcpyHostToDevice, s0));
    if (!plan.output_init.empty() && y_bytes)
      SPARSETUNE_CUDA(
          cudaMemcpyAsync(dy.get(), dinit.get(), y_bytes, cudaMemcpyDeviceToDevice, s0));
    else if (plan.zero_output && y_bytes)
      SPARSETUNE_CUDA(cudaMemsetAsync(dy.get(), 0, y_bytes, s0));
    SPARSETUNE_CUDA(cudaStreamSynchronize(s0));
    for (std::size_t g = 0; g < groups.size(); ++g) {
      for (std::size_t b = 0; b < groups[g].size(); ++b) {
        const auto& batch = groups[g][b];
        const std::size_t si = b % streams_of[g];
        const cudaStream_t s = streams[si];
        mark("h2d", b, static_cast<int>(si), s);
        if (batch.bytes)
          SPARSETUNE_CUDA(cudaMemcpyAsync(arena[si].get(), host[g][b].get(), batch.bytes,
                                          cudaMemcpyHostToDevice, s));
        mark("kernels", b, static_cast<int>(si), s);
        std::map<std::string, void*> where;
        std::size_t at = 0;
        for (const auto& name : batch.buffers) {
          where[name] = static_cast<char*>(arena[si].get()) + at;
          at += aligned(plan.buffers.at(name).bytes.size());
        }
        where[plan.x] = dx.get();
        where[plan.output] = dy.get();
        for (auto l : batch.launches) {
          const PlanLaunch& pl = plan.launches[l];
          std::vector<std::array<unsigned char, 8>> slots(pl.args.size());
          std::vector<void*> argv;
          for (std::size_t i = 0; i < pl.args.size(); ++i) {
            const PlanArg& a = pl.args[i];
            unsigned char* p = slots[i].data();
            if (a.kind == PlanArg::Kind::Buffer) {
              const auto it = where.find(a.buffer);
              if (it == where.end()) throw Error("pipeline: no device buffer '" + a.buffer + "'");
              std::memcpy(p, &it->second, sizeof(void*));
            } else if (a.kind == PlanArg::Kind::I32) {
              const auto v = static_cast<std::int32_t>(a.i);
              std::memcpy(p, &v, 4);
            } else if (a.kind == PlanArg::Kind::I64) {
              std::memcpy(p, &a.i, 8);
            } else if (a.kind == PlanArg::Kind::F32) {
              const auto v = static_cast<float>(a.f);
              std::memcpy(p, &v, 4);
            } else {
              std::memcpy(p, &a.f, 8);
            }
            argv.push_back(p);
          }
          module.launch(pl.kernel, {pl.grid[0], pl.grid[1], pl.grid[2]},
                        {pl.block[0], pl.block[1], pl.block[2]}, argv.data(),
                        static_cast<std::size_t>(pl.shared_bytes), s, false);
        }
        mark("y back", b, static_cast<int>(si), s);
        if (spans)
          for (const auto& r : batch.y_runs)
            if (r[1] > r[0])
              SPARSETUNE_CUDA(cudaMemcpyAsync(static_cast<char*>(host_y.get()) + r[0] * es,
                                              static_cast<char*>(dy.get()) + r[0] * es,
                                              (r[1] - r[0]) * es, cudaMemcpyDeviceToHost, s));
        mark("done", b, static_cast<int>(si), s);
      }
      SPARSETUNE_CUDA(cudaDeviceSynchronize());  // Alg. 1, line 22
    }
    if (y_bytes && !spans)
      SPARSETUNE_CUDA(cudaMemcpyAsync(host_y.get(), dy.get(), y_bytes, cudaMemcpyDeviceToHost, s0));
    SPARSETUNE_CUDA(cudaStreamSynchronize(s0));
  };

  // Checking run: y poisoned first (NaN in every float type) unless the kernels add into a
  // cleared or reset y; the host's copy too, so a row no span brings back shows.
  SPARSETUNE_CUDA(cudaMemset(dy.get(), 0xff, dy.bytes()));
  std::memset(host_y.get(), 0xff, std::max<std::size_t>(y_bytes, 1));
  run();
  const auto out = to_doubles(host_y.get(), plan.output_length, plan.output_dtype);
  const auto& rb = plan.buffers.at(plan.y_ref).bytes;
  std::vector<double> ref(plan.output_length);
  if (!ref.empty()) std::memcpy(ref.data(), rb.data(), ref.size() * 8);
  const OutputCheck check =
      check_output(out, ref, error_tolerance(parse_dtype(plan.check_dtype), plan.max_len));
  std::vector<double> times;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = Clock::now();
    run();
    times.push_back(ms_since(t0));
  }
  if (const char* path = std::getenv("SPARSETUNE_PIPELINE_TRACE"); path && *path) {
    std::vector<Mark> recorded;
    marks = &recorded;
    run();
    marks = nullptr;
    nlohmann::json steps = nlohmann::json::array();
    SPARSETUNE_CUDA(cudaDeviceSynchronize());
    for (const auto& m : recorded) {
      float ms = 0;
      SPARSETUNE_CUDA(cudaEventElapsedTime(&ms, recorded.front().event, m.event));
      steps.push_back({m.what, m.batch, m.stream, ms});
    }
    for (const auto& m : recorded) cudaEventDestroy(m.event);
    std::ofstream(path, std::ios::app)
        << nlohmann::json{{"streams", streams_of},
                          {"y_back", spans ? "per batch" : "at the end"},
                          {"steps", steps}}
               .dump()
        << "\n";
  }
  const Stats t = summarize(times);
  return {{"result",
           {{"verified", check.verified()},
            {"error", check.error},
            {"tolerance", check.tolerance},
            {"unwritten", check.unwritten},
            {"time_ms", {{"median", t.median}, {"min", t.min}, {"max", t.max}}},
            {"device_bytes", device_bytes},
            {"streams", streams_of},
            {"y_back", spans ? "per batch" : "at the end"}}}};
}

nlohmann::json stream_overhead_job(const nlohmann::json&) {
  int dev = 0;
  SPARSETUNE_CUDA(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  SPARSETUNE_CUDA(cudaGetDeviceProperties(&prop, dev));
  CompileOptions co;
  co.arch = "sm_" + std::to_string(prop.major * 10 + prop.minor);
  const auto empty =
      compile({"empty", "extern \"C\" __global__ void sparsetune_empty() {}\n"}, co, nullptr);
  Module module(empty.cubin);
  SPARSETUNE_CUDA(cudaFree(nullptr));  // the context exists before anything is timed
  // Per stream count: create the streams, launch on each, synchronize, destroy; median of 7.
  std::vector<std::pair<int, double>> samples;
  nlohmann::json out = nlohmann::json::array();
  for (int n : {1, 2, 4, 8, 16, 32}) {
    std::vector<double> t;
    for (int rep = 0; rep < 7; ++rep) {
      const auto t0 = Clock::now();
      {
        Streams s(n);
        for (int i = 0; i < n; ++i)
          module.launch("sparsetune_empty", {1, 1, 1}, {32, 1, 1}, nullptr, 0, s[i], false);
        SPARSETUNE_CUDA(cudaDeviceSynchronize());
      }
      t.push_back(ms_since(t0) * 1e3);
    }
    const double us = summarize(t).median;
    samples.push_back({n, us});
    out.push_back({n, us});
  }
  // Copy bandwidths with 64 MiB of pinned memory.
  const std::size_t bytes = std::size_t{64} << 20;
  PinnedMem h(bytes);
  std::memset(h.get(), 1, bytes);
  DeviceMem d(bytes);
  auto gbs = [&](cudaMemcpyKind kind) {
    std::vector<double> t;
    for (int rep = 0; rep < 5; ++rep) {
      const auto t0 = Clock::now();
      if (kind == cudaMemcpyHostToDevice)
        SPARSETUNE_CUDA(cudaMemcpy(d.get(), h.get(), bytes, kind));
      else
        SPARSETUNE_CUDA(cudaMemcpy(h.get(), d.get(), bytes, kind));
      t.push_back(ms_since(t0));
    }
    return static_cast<double>(bytes) / (summarize(t).median * 1e-3) / 1e9;
  };
  const double h2d = gbs(cudaMemcpyHostToDevice), d2h = gbs(cudaMemcpyDeviceToHost);
  return {{"lambda_us", fit_lambda(samples)}, {"h2d_gbs", h2d}, {"d2h_gbs", d2h}, {"samples", out}};
}

}  // namespace sparsetune::runtime
