#include "search/gpu_evaluator.hpp"

#include <cstdlib>
#include <filesystem>
#include <future>

#include "codegen/emit.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "runtime/bench.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/nvrtc.hpp"
#include "runtime/problem_file.hpp"

namespace sparsetune::search {

namespace {

struct Prepared {
  bool ok = false;
  std::string failure;
  std::string format_bytes;
  std::vector<char> cubin;
};

Prepared prepare(const graph::Graph& g, const Csr64& a, const std::string& dtype,
                 const std::string& arch) {
  Prepared p;
  try {
    codegen::EmitOptions opt;
    opt.design.dtype = dtype;
    const auto e = codegen::generate(g, a, opt);
    runtime::CompileOptions co;
    co.arch = arch;
    const runtime::KernelCache cache;
    const auto c = runtime::compile({"candidate", e.kernels.source}, co, &cache);
    p.cubin = c.cubin;
    p.format_bytes = e.format_bytes;
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

bool GpuEvaluator::load() {
  const auto path = std::filesystem::path(dir_) / "problem.safetensors";
  if (!std::filesystem::exists(path)) runtime::write_problem(path, a_);
  const auto r = worker_.call(
      {{"job", "load"}, {"path", path.string()}, {"op", "spmv"}, {"dtype", dtype_}, {"seed", 1}},
      timeout_s_);
  loaded_ = r.ok;
  if (!r.ok) note_ = "the worker could not load the matrix: " + r.error;
  return r.ok;
}

std::vector<Evaluation> GpuEvaluator::evaluate(const std::vector<Candidate>& batch) {
  if (fallback_) return model_.evaluate(batch);
  // Design and compile every candidate of the batch on host threads; measure in order, each as
  // soon as it is ready, while the later ones still compile.
  std::vector<std::future<Prepared>> ready;
  for (const auto& c : batch)
    ready.push_back(
        std::async(std::launch::async, prepare, std::cref(c.graph), std::cref(a_), dtype_, arch_));
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
    const auto fpath = stem.string() + ".safetensors", cpath = stem.string() + ".cubin";
    runtime::write_file_atomic(fpath, p.format_bytes.data(), p.format_bytes.size());
    runtime::write_file_atomic(cpath, p.cubin.data(), p.cubin.size());
    if (!loaded_ && !load()) {
      e.failure = note_;
      out.push_back(e);
      continue;
    }
    const auto r = worker_.call(crash ? nlohmann::json{{"job", "crash"}}
                                      : nlohmann::json{{"job", "format"},
                                                       {"format", fpath},
                                                       {"cubin", cpath},
                                                       {"runs", runs_}},
                                timeout_s_);
    std::error_code ec;
    std::filesystem::remove(fpath, ec);
    std::filesystem::remove(cpath, ec);
    if (!r.ok && r.error.find("unknown worker job") != std::string::npos) {
      fallback_ = true;
      note_ =
          "this build's worker cannot run generated kernels (no \"format\" job): candidates "
          "were scored by the cost model";
      out.push_back(model_.evaluate_one(batch[i].graph));
      continue;
    }
    if (!r.ok) {
      if (r.worker_lost) loaded_ = false;  // a fresh worker loads the matrix again
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
