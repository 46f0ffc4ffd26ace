#pragma once
// Does a GPU run's CPU work without a GPU: every candidate is designed on the full matrix,
// compiled by NVRTC and turned into its launch plan on the same pool of host threads as
// GpuEvaluator, then scored by the cost model instead of being run. It finds the candidates that
// fail before reaching a GPU and measures how many candidates per second the CPU side sustains.
#include "search/evaluator.hpp"
#include "search/pipeline.hpp"

namespace sparsetune::search {

class CompileOnlyEvaluator : public Evaluator {
 public:
  // `spmm_n`: 0 for SpMV candidates, else the columns of B of SpMM ones.
  CompileOnlyEvaluator(const Csr64& a, std::string dtype, std::string arch, SourceEdit edit = {},
                       std::int64_t spmm_n = 0);
  bool measures() const override { return false; }
  std::string device() const override { return "cost-model"; }
  std::string arch() const override { return arch_; }
  std::vector<Evaluation> evaluate(const std::vector<Candidate>& batch) override;
  std::vector<Evaluation> evaluate_until(const std::vector<Candidate>& batch,
                                         const std::function<bool(double)>& go) override;
  int preferred_batch() const override;
  nlohmann::json stage_seconds() const override;  // nothing measured: measure_s stays 0

 private:
  const Csr64& a_;
  std::string dtype_, arch_;
  SourceEdit edit_;
  std::int64_t max_len_ = 1;
  std::int64_t spmm_n_ = 0;
  CostModelEvaluator model_;
  PipelineTimes times_;  // longest preparation and measurement so far, across batches
  StageSeconds stages_;
};

}  // namespace sparsetune::search
