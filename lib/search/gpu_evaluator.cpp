#include "search/gpu_evaluator.hpp"

#include <cstdlib>
#include <filesystem>
#include <future>

#include "codegen/emit.hpp"
#include "codegen/launch_plan.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "io/safetensors.hpp"
#include "runtime/bench.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/nvrtc.hpp"

namespace sparsetune::search {

namespace {

struct Prepared {
  bool ok = false;
  std::string failure;
  std::string plan_bytes;  // the launch plan with its cubin; x and y_ref are in the inputs file
};

Prepared prepare(const graph::Graph& g, const Csr64& a, const std::string& dtype,
                 const std::string& arch, std::int64_t max_len) {
  Prepared p;
  try {
    codegen::EmitOptions opt;
    opt.design.dtype = dtype;
    const auto e = codegen::generate(g, a, opt);
    runtime::CompileOptions co;
    co.arch = arch;
    const runtime::KernelCache cache;
    const auto c = runtime::compile({"candidate", e.kernels.source}, co, &cache);
    const auto plan = codegen::make_launch_plan(e.format, e.kernels, g.name);
    p.plan_bytes = io::serialize_safetensors(codegen::plan_file(plan, c.cubin, max_len));
    p.ok = true;
  } catch (const Error& ex) {
    p.failure = ex.what();
  }
  return p;
}

}  // namespace

GpuEvaluator::GpuEvaluator(const Csr64& a, std::string dtype, runtime::WorkerLaunch launch,
                           double timeout_s, int runs)
    : a_(a),
      dtype_(std::move(dtype)),
      worker_(std::move(launch)),
      timeout_s_(timeout_s),
      runs_(runs),
      model_(a, dtype_) {
  std::string t = (std::filesystem::temp_directory_path() / "sparsetune-tune-XXXXXX").string();
  if (!mkdtemp(t.data())) throw Error("cannot create a temporary folder for the tuning run");
  dir_ = t;
}

GpuEvaluator::~GpuEvaluator() {
  worker_.stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

bool GpuEvaluator::open(std::string* why) {
  const auto r = worker_.call({{"job", "device"}}, 60);
  if (!r.ok) {
    *why = r.error.empty() ? "no CUDA device" : r.error;
    fallback_ = true;
    return false;
  }
  const auto& d = r.body.at("device");
  device_ = d.value("name", std::string("unknown GPU"));
  arch_ = d.value("arch", std::string("sm_90"));
  return load() || (*why = note_, false);
}

// x and the fp64 reference, written once and shared by every candidate's plan.
bool GpuEvaluator::load() {
  const auto path = std::filesystem::path(dir_) / "inputs.safetensors";
  try {
    if (!std::filesystem::exists(path)) {
      const auto in = codegen::spmv_plan_inputs(dtype_, a_, codegen::plan_x(a_.cols, dtype_, 1));
      max_len_ = in.max_len;
      io::write_safetensors(path.string(), codegen::plan_inputs_file(dtype_, in));
    }
    inputs_ = path.string();
    loaded_ = true;
  } catch (const Error& e) {
    note_ = std::string("cannot prepare the inputs of the measurements: ") + e.what();
    loaded_ = false;
  }
  return loaded_;
}

std::vector<Evaluation> GpuEvaluator::evaluate(const std::vector<Candidate>& batch) {
  if (fallback_) return model_.evaluate(batch);
  // Design and compile every candidate of the batch on host threads; measure in order, each as
  // soon as it is ready, while the later ones still compile.
  std::vector<std::future<Prepared>> ready;
  for (const auto& c : batch)
    ready.push_back(std::async(std::launch::async, prepare, std::cref(c.graph), std::cref(a_),
                               dtype_, arch_, max_len_));
  std::vector<Evaluation> out;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    Prepared p = ready[i].get();
    if (fallback_) {
      out.push_back(model_.evaluate_one(batch[i].graph));
      continue;
    }
    Evaluation e;
    e.measured = true;
    if (!p.ok) {
      e.failure = p.failure;
      out.push_back(e);
      continue;
    }
    const bool crash = serial_ == crash_at_;
    const auto stem = std::filesystem::path(dir_) / ("c" + std::to_string(serial_++));
    const auto fpath = stem.string() + ".plan.safetensors";
    runtime::write_file_atomic(fpath, p.plan_bytes.data(), p.plan_bytes.size());
    if (!loaded_ && !load()) {
      e.failure = note_;
      out.push_back(e);
      continue;
    }
    const auto r = worker_.call(crash ? nlohmann::json{{"job", "crash"}}
                                      : nlohmann::json{{"job", "plan"},
                                                       {"plan", fpath},
                                                       {"inputs", {inputs_}},
                                                       {"runs", runs_}},
                                timeout_s_);
    std::error_code ec;
    std::filesystem::remove(fpath, ec);
    if (!r.ok && r.error.find("unknown worker job") != std::string::npos) {
      fallback_ = true;
      note_ =
          "this build's worker cannot run generated kernels (no \"plan\" job): candidates "
          "were scored by the cost model";
      out.push_back(model_.evaluate_one(batch[i].graph));
      continue;
    }
    if (!r.ok) {
      e.failure = (r.worker_lost ? "worker lost: " : "") + r.error;
      out.push_back(e);
      continue;
    }
    const auto res = runtime::baseline_from_json(r.body.at("result"), 0.0);
    e.error = res.error;
    e.time_us = res.time_ms.median * 1e3;
    e.ok = res.status == "ok" && res.verified && e.time_us > 0;
    if (!e.ok) e.failure = res.note.empty() ? "wrong result or not run" : res.note;
    e.detail = r.body.at("result");
    fill_rates(e, a_, dtype_);
    out.push_back(e);
  }
  return out;
}

}  // namespace sparsetune::search
