#include "search/compile_only_evaluator.hpp"

#include <algorithm>

namespace sparsetune::search {

CompileOnlyEvaluator::CompileOnlyEvaluator(const Csr64& a, std::string dtype, std::string arch,
                                           SourceEdit edit, std::int64_t spmm_n)
    : a_(a),
      dtype_(std::move(dtype)),
      arch_(std::move(arch)),
      edit_(std::move(edit)),
      spmm_n_(spmm_n),
      model_(a, dtype_, {}, spmm_n) {
  for (std::int64_t r = 0; r < a.rows; ++r)
    max_len_ = std::max<std::int64_t>(max_len_, a.row_ptr[r + 1] - a.row_ptr[r]);
}

std::vector<Evaluation> CompileOnlyEvaluator::evaluate(const std::vector<Candidate>& batch) {
  return evaluate_until(batch, [](double) { return true; });
}

nlohmann::json CompileOnlyEvaluator::stage_seconds() const {
  return stages_.to_json(design_slots(a_.rows, a_.nnz()));
}

int CompileOnlyEvaluator::preferred_batch() const { return pipeline_batch(a_.rows, a_.nnz()); }

std::vector<Evaluation> CompileOnlyEvaluator::evaluate_until(
    const std::vector<Candidate>& batch, const std::function<bool(double)>& go) {
  std::vector<Evaluation> out;
  run_pipeline(
      batch.size(), design_slots(a_.rows, a_.nnz()), go,
      [&](std::size_t i) {
        return prepare_candidate(batch[i].graph, a_, dtype_, arch_, max_len_, edit_, spmm_n_);
      },
      [&](std::size_t i, Prepared& p) {
        stages_.add(p);
        if (!p.ok) {
          Evaluation e;
          e.failure = p.failure;
          e.category = p.category;
          out.push_back(e);
          return;
        }
        Evaluation e = model_.evaluate_one(batch[i].graph);
        e.detail["plan_bytes"] = p.plan_bytes.size();
        e.detail["prepare_s"] = p.seconds;
        out.push_back(std::move(e));
      },
      &times_);
  return out;
}

}  // namespace sparsetune::search
