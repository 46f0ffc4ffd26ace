#include "search/gpu_evaluator.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "codegen/emit.hpp"
#include "codegen/launch_plan.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "graph/format.hpp"
#include "io/safetensors.hpp"
#include "runtime/bench.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/nvrtc.hpp"
#include "search/pipeline.hpp"

namespace sparsetune::search {

GpuEvaluator::GpuEvaluator(const Csr64& a, std::string dtype, runtime::WorkerLaunch launch,
                           double timeout_s, int runs, std::int64_t spmm_n)
    : a_(a),
      dtype_(std::move(dtype)),
      spmm_n_(spmm_n),
      worker_(std::move(launch)),
      timeout_s_(timeout_s),
      runs_(runs),
      model_(a, dtype_, {}, spmm_n) {
  std::string t = (std::filesystem::temp_directory_path() / "sparsetune-tune-XXXXXX").string();
  if (!mkdtemp(t.data())) throw Error("cannot create a temporary folder for the tuning run");
  dir_ = t;
}

GpuEvaluator::~GpuEvaluator() {
  worker_.stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void GpuEvaluator::set_layout(const std::string& layout) {
  graph::check_layout(layout, spmm_n_ >= 1 ? "spmm" : "spmv");
  if (loaded_) throw Error("GpuEvaluator: the layout is set before open()");
  layout_ = layout;
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
  sms_ = d.value("sms", 0);
  return load() || (*why = note_, false);
}

// x and the fp64 reference, written once and shared by every candidate's plan.
bool GpuEvaluator::load() {
  const auto path = std::filesystem::path(dir_) / "inputs.safetensors";
  try {
    if (!std::filesystem::exists(path)) {
      const auto in =
          spmm_n_ >= 1 ? codegen::spmm_plan_inputs(dtype_, a_, spmm_n_, 1, layout_ == "col")
                       : codegen::spmv_plan_inputs(dtype_, a_, codegen::plan_x(a_.cols, dtype_, 1));
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
  return evaluate_until(batch, [](double) { return true; });
}

int GpuEvaluator::preferred_batch() const { return pipeline_batch(a_.rows, a_.nnz()); }

std::vector<Evaluation> GpuEvaluator::evaluate_until(const std::vector<Candidate>& batch,
                                                     const std::function<bool(double)>& go) {
  if (fallback_) return model_.evaluate(batch);
  // Design and compile candidates on host threads (as many as cores and memory allow); measure
  // them in order, each as soon as it is ready, while the later ones are still being prepared.
  std::vector<Evaluation> out;
  run_pipeline(
      batch.size(), design_slots(a_.rows, a_.nnz()), go,
      [&](std::size_t i) {
        return prepare_candidate(batch[i].graph, a_, dtype_, arch_, max_len_, edit_, spmm_n_,
                                 layout_);
      },
      [&](std::size_t i, Prepared& p) {
        stages_.add(p);
        const auto t0 = std::chrono::steady_clock::now();
        out.push_back(measure(batch[i], p));
        stages_.measure +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        stages_.measured += out.back().measured && out.back().ok;
        if (const auto& d = out.back().detail; d.is_object() && d.contains("worker_ms")) {
          const auto& w = d["worker_ms"];
          stages_.worker_setup += w.value("setup", 0.0) * 1e-3;
          stages_.worker_check += w.value("check", 0.0) * 1e-3;
          stages_.worker_timed += w.value("timed", 0.0) * 1e-3;
        }
      },
      &times_);
  return out;
}

nlohmann::json GpuEvaluator::stage_seconds() const {
  return stages_.to_json(design_slots(a_.rows, a_.nnz()));
}

Evaluation GpuEvaluator::measure(const Candidate& c, Prepared& p) {
  if (fallback_) return model_.evaluate_one(c.graph);
  Evaluation e;
  e.measured = true;
  if (!p.ok) {
    e.failure = p.failure;
    e.category = p.category;
    return e;
  }
  const bool crash = serial_ == crash_at_;
  const auto stem = std::filesystem::path(dir_) / ("c" + std::to_string(serial_++));
  const auto fpath = stem.string() + ".plan.safetensors";
  runtime::write_file_atomic(fpath, p.plan_bytes.data(), p.plan_bytes.size());
  std::string().swap(p.plan_bytes);
  if (!loaded_ && !load()) {
    e.failure = note_;
    return e;
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
    return model_.evaluate_one(c.graph);
  }
  if (!r.ok) {
    e.failure = (r.worker_lost ? "worker lost: " : "") + r.error;
    e.category = r.worker_lost
                     ? (r.error.find("timed out") != std::string::npos ? failure::kTimeout
                                                                       : failure::kWorkerCrash)
                     : classify_failure(r.error);
    return e;
  }
  const auto res = runtime::baseline_from_json(r.body.at("result"), 0.0);
  e.error = res.error;
  e.flushed_us = res.time_ms.median * 1e3;
  e.time_us =
      rank_warm_ && res.warm.measured && res.warm.median_us > 0 ? res.warm.median_us : e.flushed_us;
  e.ok = res.status == "ok" && res.verified && e.time_us > 0;
  if (!e.ok) {
    e.failure = res.note.empty() ? "wrong result or not run" : res.note;
    // Ran but gave a wrong answer: verification; did not run: by the note's wording.
    e.category = res.status == "ok" ? failure::kVerification : classify_failure(e.failure);
  }
  e.detail = r.body.at("result");
  fill_rates(e, a_, dtype_, spmm_n_);
  return e;
}

}  // namespace sparsetune::search
