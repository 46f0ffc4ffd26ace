#pragma once
// Scores candidates by the learned SpMV ranking (models/spmv_ranker.hpp) instead of the analytic
// cost model. Each candidate is still designed through the cost model first, so a candidate the
// Designer refuses fails exactly as before; a designed one gets the learned model's time. The
// cost model's own time stays in the evaluation's detail ("cost_model_us").
#include <optional>
#include <string>

#include "models/spmv_ranker.hpp"
#include "search/evaluator.hpp"

namespace sparsetune::search {

class LearnedEvaluator : public Evaluator {
 public:
  // `designer` designs the candidates (and must outlive this); `m` describes the matrix `a`.
  LearnedEvaluator(CostModelEvaluator& designer, const models::SpmvRanker& ranker,
                   models::MatrixInputs m, const Csr64& a);
  bool measures() const override { return false; }
  // The database's device key of its predictions: the model and its training set, so a new
  // model's answer is never taken from an old one's.
  std::string device() const override;
  std::string arch() const override { return ranker_.file().arch; }
  std::vector<Evaluation> evaluate(const std::vector<Candidate>& batch) override;

 private:
  CostModelEvaluator& designer_;
  const models::SpmvRanker& ranker_;
  models::MatrixInputs m_;
  const Csr64& a_;
};

// The shipped ranking model of `arch` under `models_dir` ("": default_models_dir()), or nothing:
// then why not (missing, stale, unreadable) is logged as a warning, once per process.
std::optional<models::SpmvRanker> load_spmv_ranker(const std::string& models_dir,
                                                   const std::string& arch);

// configs/models (or $SPARSETUNE_CONFIG_DIR/models).
std::string default_models_dir();

}  // namespace sparsetune::search
