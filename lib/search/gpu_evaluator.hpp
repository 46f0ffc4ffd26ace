#pragma once
// Scores candidates on the GPU through the runtime's worker process: each candidate is designed
// and its kernels compiled by NVRTC on a pool of host threads, as many as cores and memory allow
// (search/pipeline.hpp), while the ready ones are measured in order, then the worker times and
// verifies it. A crash, hang or wrong answer fails that candidate only. Each candidate becomes a
// launch plan (codegen/launch_plan.hpp) with its cubin; x and the fp64 reference are written once
// for all. The worker job it speaks (runtime/plan_job.hpp):
//   request {"job": "plan", "plan": PATH, "inputs": [PATH], "runs": N}
//   reply   {"result": {...}}: the fields of a cuSPARSE baseline result (runtime/bench.hpp:
//     status, verified, error, tolerance, time_ms, gflops, gbs, note)
// When the worker does not know the job, candidates are scored by the cost model instead and
// note() says so.
#include <memory>
#include <string>

#include "runtime/worker.hpp"
#include "search/evaluator.hpp"
#include "search/pipeline.hpp"

namespace sparsetune::search {

class GpuEvaluator : public Evaluator {
 public:
  // `spmm_n`: 0 measures SpMV candidates; n >= 1 SpMM ones with n columns of B (the inputs
  // file then holds B and the fp64 A·B, shared by every candidate).
  GpuEvaluator(const Csr64& a, std::string dtype, runtime::WorkerLaunch launch,
               double timeout_s = 120, int runs = 20, std::int64_t spmm_n = 0);
  ~GpuEvaluator() override;

  // Starts the worker and asks for its device; false, with the reason, when there is none.
  bool open(std::string* why);

  bool measures() const override { return !fallback_; }
  std::string device() const override { return device_; }
  std::string arch() const override { return arch_; }
  std::vector<Evaluation> evaluate(const std::vector<Candidate>& batch) override;
  std::vector<Evaluation> evaluate_until(const std::vector<Candidate>& batch,
                                         const std::function<bool(double)>& go) override;
  int preferred_batch() const override;
  nlohmann::json stage_seconds() const override;

  const std::string& note() const { return note_; }  // why candidates were modeled instead

  // Rank by the warm median (back-to-back runs, the matrix held in L2 where it fits) instead of
  // the flushed one; Evaluation::flushed_us keeps the flushed median either way.
  void rank_warm(bool on) { rank_warm_ = on; }
  bool ranks_warm() const { return rank_warm_; }

  // SpMM: B's and C's layout the candidates are measured in, "row" (the default) or "col";
  // set before open().
  void set_layout(const std::string& layout);
  const std::string& layout() const { return layout_; }
  // The device's multiprocessors (0 before open() found one).
  int sms() const { return sms_; }

  // For tests: the nth candidate measured (0-based) crashes the worker instead of running.
  void plant_crash(int nth) { crash_at_ = nth; }
  // For tests: edits each candidate's kernel source before NVRTC.
  void edit_sources(SourceEdit edit) { edit_ = std::move(edit); }

 private:
  bool load();
  Evaluation measure(const Candidate& c, Prepared& p);  // on the calling thread
  const Csr64& a_;
  std::string dtype_;
  std::int64_t spmm_n_ = 0;
  runtime::Worker worker_;
  double timeout_s_;
  int runs_;
  std::string dir_;           // temporary folder for the inputs and the plans
  std::string inputs_;        // x and y_ref, shared by every plan
  std::int64_t max_len_ = 0;  // longest row: the tolerance
  std::string device_ = "cost-model", arch_ = "sm_90", note_;
  std::string layout_ = "row";
  int sms_ = 0;
  bool loaded_ = false, fallback_ = false, rank_warm_ = false;
  int serial_ = 0;
  int crash_at_ = -1;
  SourceEdit edit_;
  CostModelEvaluator model_;
  PipelineTimes times_;  // longest preparation and measurement so far, across batches
  StageSeconds stages_;
};

}  // namespace sparsetune::search
