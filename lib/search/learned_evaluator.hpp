#pragma once
// Scores candidates by the learned SpMV ranking (models/spmv_ranker.hpp) instead of the analytic
// cost model. The ranking reads the matrix's features and the graph, not its design; each
// candidate is still designed, so a candidate the Designer refuses fails as before:
//  - through the cost model (`designer`), whose time stays in the detail ("cost_model_us"), for a
//    measuring search that orders its seeds and records both predictions;
//  - or, without one, on a small row sample of the matrix only (no cost model): a predict-only
//    search needs the Designer's verdict, and designing 64 candidates on the whole matrix took
//    most of its time. A refusal the sample misses is caught when tune checks its pick.
#include <optional>
#include <string>

#include "models/spmv_ranker.hpp"
#include "search/evaluator.hpp"
#include "search/row_sample.hpp"

namespace sparsetune::search {

// The design check's sample size: large enough that row-length rules (one row per thread, per
// warp) meet the matrix's long rows' neighbourhoods, small enough to design in milliseconds.
inline constexpr std::int64_t kDesignCheckNnz = 1 << 15;

class LearnedEvaluator : public Evaluator {
 public:
  // `designer` designs the candidates (and must outlive this), or null: designed on a sample of
  // at most kDesignCheckNnz entries; `m` describes the matrix `a`.
  LearnedEvaluator(CostModelEvaluator* designer, const models::SpmvRanker& ranker,
                   models::MatrixInputs m, const Csr64& a);
  bool measures() const override { return false; }
  // The database's device key of its predictions: the model and its training set, so a new
  // model's answer is never taken from an old one's.
  std::string device() const override;
  std::string arch() const override { return ranker_.file().arch; }
  std::vector<Evaluation> evaluate(const std::vector<Candidate>& batch) override;

 private:
  std::vector<Evaluation> design_on_sample(const std::vector<Candidate>& batch) const;

  CostModelEvaluator* designer_;
  RowSample check_;  // the design check's sample, when there is no designer
  const models::SpmvRanker& ranker_;
  models::MatrixInputs m_;
  const Csr64& a_;
};

// The shipped ranking model of `arch` under `models_dir` ("": default_models_dir()), or nothing:
// then why not (missing, stale, unreadable) is logged as a warning, once per process.
std::optional<models::SpmvRanker> load_spmv_ranker(
    const std::string& models_dir, const std::string& arch,
    const char* name = models::kSpmvRankName);  // or kSpmmRankName

// configs/models (or $SPARSETUNE_CONFIG_DIR/models).
std::string default_models_dir();

}  // namespace sparsetune::search
