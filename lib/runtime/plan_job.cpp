#include "runtime/plan_job.hpp"

#include <cuda_fp16.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>

#include "core/reference.hpp"
#include "runtime/cuda_util.hpp"
#include "runtime/device.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/launch_plan.hpp"
#include "runtime/module.hpp"
#include "runtime/stats.hpp"
#include "runtime/timing.hpp"

namespace sparsetune::runtime {

namespace {

// The stream, events and L2-flush buffer of the plan job (the baselines keep their own).
struct PlanContext : TimedStream {
  PlanContext() : TimedStream(": running kernels needs a GPU") {}
};

std::unique_ptr<PlanContext> g_plan_context;
PlanContext& plan_context() {
  if (!g_plan_context) g_plan_context = std::make_unique<PlanContext>();
  return *g_plan_context;
}

// A stream's work captured once and instantiated; destroyed with its owner.
struct CapturedGraph {
  cudaGraphExec_t exec = nullptr;
  CapturedGraph() = default;
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  ~CapturedGraph() {
    if (exec) cudaGraphExecDestroy(exec);
  }
  // Relaxed capture: the module's kernel lookups may run while the stream is capturing.
  void capture(cudaStream_t stream, const std::function<void()>& work) {
    SPARSETUNE_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
    cudaGraph_t g = nullptr;
    try {
      work();
    } catch (...) {
      cudaStreamEndCapture(stream, &g);
      if (g) cudaGraphDestroy(g);
      throw;
    }
    SPARSETUNE_CUDA(cudaStreamEndCapture(stream, &g));
    const cudaError_t e = cudaGraphInstantiate(&exec, g, 0);
    cudaGraphDestroy(g);
    SPARSETUNE_CUDA(e);
  }
};

std::vector<double> unpack(const std::vector<char>& raw, std::int64_t count,
                           const std::string& dtype) {
  std::vector<double> out(count);
  for (std::int64_t i = 0; i < count; ++i) {
    if (dtype == "F64") {
      std::memcpy(&out[i], raw.data() + 8 * i, 8);
    } else if (dtype == "F32") {
      float f;
      std::memcpy(&f, raw.data() + 4 * i, 4);
      out[i] = f;
    } else {
      __half h;
      std::memcpy(&h, raw.data() + 2 * i, 2);
      out[i] = __half2float(h);
    }
  }
  return out;
}

// One kernel argument's bytes, kept alive while the launches are queued.
struct ArgSlot {
  alignas(8) unsigned char bytes[8] = {};
};

}  // namespace

nlohmann::json plan_job(const nlohmann::json& req) {
  // Where a measurement's time goes (report.json sums these over a search): reading the plan,
  // uploading it and loading its module; the checking run; the timed runs.
  const auto t_start = std::chrono::steady_clock::now();
  const auto ms_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
  };
  std::vector<std::filesystem::path> inputs;
  if (req.contains("inputs"))
    for (const auto& p : req["inputs"]) inputs.emplace_back(p.get<std::string>());
  LaunchPlan plan = read_plan(req.at("plan").get<std::string>(), inputs);
  if (req.contains("cubin")) plan.cubin = read_file_bytes(req["cubin"].get<std::string>());
  if (plan.cubin.empty()) throw Error("the launch plan comes with no cubin");
  if (plan.op != "spmv" && plan.op != "spmm")
    throw Error("launch plans measure spmv and spmm only, not " + plan.op);
  const int runs = std::max(1, req.value("runs", 20));

  PlanContext& c = plan_context();
  Module module(plan.cubin);

  // Device buffers: every stored buffer but the host-side reference; never a null pointer.
  std::map<std::string, DeviceMem> dev;
  for (const auto& [name, b] : plan.buffers) {
    if (name == plan.y_ref) continue;
    DeviceMem m(std::max<std::size_t>(b.bytes.size(), 256));
    m.upload(b.bytes.data(), b.bytes.size());
    dev.emplace(name, std::move(m));
  }
  const std::size_t y_bytes =
      static_cast<std::size_t>(plan.output_length) * plan_dtype_size(plan.output_dtype);
  DeviceMem& y =
      dev.emplace(plan.output, DeviceMem(std::max<std::size_t>(y_bytes, 256))).first->second;

  // Argument slots per launch, filled once: pointers to device buffers and scalars.
  std::vector<std::vector<ArgSlot>> slots(plan.launches.size());
  std::vector<std::vector<void*>> argv(plan.launches.size());
  for (std::size_t l = 0; l < plan.launches.size(); ++l) {
    const auto& args = plan.launches[l].args;
    slots[l].resize(args.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
      unsigned char* s = slots[l][i].bytes;
      const PlanArg& a = args[i];
      if (a.kind == PlanArg::Kind::Buffer) {
        const auto it = dev.find(a.buffer);
        if (it == dev.end())
          throw Error("launch plan: " + plan.launches[l].kernel + " takes '" + a.buffer +
                      "', which is not a device buffer");
        void* p = it->second.get();
        std::memcpy(s, &p, sizeof p);
      } else if (a.kind == PlanArg::Kind::I32) {
        const auto v = static_cast<std::int32_t>(a.i);
        std::memcpy(s, &v, 4);
      } else if (a.kind == PlanArg::Kind::I64) {
        std::memcpy(s, &a.i, 8);
      } else if (a.kind == PlanArg::Kind::F32) {
        const auto v = static_cast<float>(a.f);
        std::memcpy(s, &v, 4);
      } else {
        std::memcpy(s, &a.f, 8);
      }
    }
    for (auto& s : slots[l]) argv[l].push_back(s.bytes);
  }

  const auto launch = [&](std::size_t l) {
    const PlanLaunch& pl = plan.launches[l];
    module.launch(pl.kernel, {pl.grid[0], pl.grid[1], pl.grid[2]},
                  {pl.block[0], pl.block[1], pl.block[2]}, argv[l].data(),
                  static_cast<std::size_t>(pl.shared_bytes), c.stream, false);
  };
  const DeviceMem* y_init = plan.output_init.empty() ? nullptr : &dev.at(plan.output_init);
  auto op = [&] {
    if (plan.zero_output && y_bytes)
      SPARSETUNE_CUDA(cudaMemsetAsync(y.get(), 0, y_bytes, c.stream));
    if (y_init && y_bytes)
      SPARSETUNE_CUDA(
          cudaMemcpyAsync(y.get(), y_init->get(), y_bytes, cudaMemcpyDeviceToDevice, c.stream));
    for (std::size_t l = 0; l < plan.launches.size(); ++l) launch(l);
  };
  // More than one operation a run (y zeroed or reset, several parts): captured once in a CUDA
  // graph and replayed, as kernel.h's Graph runs them, so a run pays one launch's overhead.
  // SPARSETUNE_NO_GRAPH=1 launches them one by one (to compare).
  const std::size_t ops =
      plan.launches.size() + (plan.zero_output && y_bytes ? 1 : 0) + (y_init && y_bytes ? 1 : 0);
  const char* no_graph = std::getenv("SPARSETUNE_NO_GRAPH");
  const bool use_graph = ops > 1 && !(no_graph && *no_graph && std::string(no_graph) != "0");
  CapturedGraph graph;
  if (use_graph) graph.capture(c.stream, op);
  const std::function<void()> run_once =
      use_graph
          ? std::function<void()>([&] { SPARSETUNE_CUDA(cudaGraphLaunch(graph.exec, c.stream)); })
          : std::function<void()>(op);

  const double setup_ms = ms_since(t_start);
  const auto t_check = std::chrono::steady_clock::now();

  // Checking run: y poisoned (all bytes 0xFF, a NaN in every float type), then every entry must
  // be written and close to the reference. A plan that zeroes y overwrites the poison itself;
  // its rows are then checked by the error alone.
  SPARSETUNE_CUDA(cudaMemsetAsync(y.get(), 0xff, y.bytes(), c.stream));
  run_once();
  SPARSETUNE_CUDA(cudaStreamSynchronize(c.stream));
  cuda_check(cudaGetLastError(), "checking run");
  std::vector<char> raw(y_bytes);
  y.download(raw.data(), raw.size());
  const std::vector<double> out = unpack(raw, plan.output_length, plan.output_dtype);
  const auto& ref_bytes = plan.buffers.at(plan.y_ref).bytes;
  std::vector<double> ref(plan.output_length);
  if (!ref.empty()) std::memcpy(ref.data(), ref_bytes.data(), ref.size() * 8);
  const OutputCheck check =
      check_output(out, ref, error_tolerance(parse_dtype(plan.check_dtype), plan.max_len));

  // The measuring protocol of every result (runtime/timing.hpp): flushed and warm.
  const double check_ms = ms_since(t_check);
  const auto t_timed = std::chrono::steady_clock::now();
  const Timing t = time_op(c.timing(), run_once, runs);
  const double timed_ms = ms_since(t_timed);
  const OpCost cost =
      plan.op == "spmm"
          ? spmm_cost(plan.rows, plan.cols, plan.nnz, plan.n, plan.index_bytes, plan.value_bytes,
                      static_cast<int>(plan_dtype_size(plan.output_dtype)))
          : spmv_cost(plan.rows, plan.cols, plan.nnz, plan.index_bytes, plan.value_bytes);
  std::string note =
      std::to_string(plan.launches.size()) + " launch" + (plan.launches.size() == 1 ? "" : "es");
  if (use_graph) note += " captured in one CUDA graph";
  if (plan.zero_output) note += ", y zeroed in each run";
  if (y_init) note += ", y reset to its initial value in each run";
  nlohmann::json r = result_json(check, t.flushed_ms, t.warm_ms, cost, note);
  // Groups of launches timed on their own (a part's, a slice's): the launches only, no zeroing,
  // L2 flushed before each run as above. Only for a plan whose full run verified.
  if (req.contains("time_groups") && check.verified()) {
    nlohmann::json times = nlohmann::json::array();
    for (const auto& group : req["time_groups"]) {
      std::vector<std::size_t> ls;
      for (const auto& l : group) {
        const auto i = l.get<std::size_t>();
        if (i >= plan.launches.size())
          throw Error("time_groups: launch " + std::to_string(i) + " is not in the plan");
        ls.push_back(i);
      }
      const auto launch_group = [&] {
        for (auto l : ls) launch(l);
      };
      const Timing g = time_op(c.timing(), launch_group, runs, kWarmupRuns, 0);
      times.push_back(g.flushed_ms.median);
    }
    r["group_times_ms"] = times;
  }
  r["worker_ms"] = {{"setup", setup_ms}, {"check", check_ms}, {"timed", timed_ms}};
  r["name"] = plan.name;
  r["n"] = plan.n;
  r["dtype"] = plan.check_dtype;
  return {{"result", r}};
}

}  // namespace sparsetune::runtime
