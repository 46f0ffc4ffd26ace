#include "search/learned_evaluator.hpp"

#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdlib>

#include "graph/designer.hpp"
#include "runtime/thread_pool.hpp"

namespace sparsetune::search {

LearnedEvaluator::LearnedEvaluator(CostModelEvaluator* designer, const models::SpmvRanker& ranker,
                                   models::MatrixInputs m, const Csr64& a)
    : designer_(designer), ranker_(ranker), m_(std::move(m)), a_(a) {
  if (!designer_) check_ = sample_rows(a, kDesignCheckNnz, 16);
}

std::vector<Evaluation> LearnedEvaluator::design_on_sample(
    const std::vector<Candidate>& batch) const {
  std::vector<Evaluation> out(batch.size());
  runtime::parallel_for(static_cast<std::int64_t>(batch.size()), [&](std::int64_t i) {
    auto& e = out[i];
    try {
      graph::Graph g = batch[i].graph;
      graph::validate(g, "candidate");
      graph::DesignOptions opt;
      opt.dtype = m_.dtype;
      graph::design(g, check_.matrix, opt);
      e.ok = true;
      e.detail = {{"design_check_rows", check_.matrix.rows}};
    } catch (const std::exception& ex) {
      fail_with(e, ex, "design: ");
    }
  });
  return out;
}

std::string LearnedEvaluator::device() const {
  const auto& f = ranker_.file();
  return "model:" + f.model + "/" + f.arch + "/" + f.training_set.value("fingerprint", "");
}

std::vector<Evaluation> LearnedEvaluator::evaluate(const std::vector<Candidate>& batch) {
  auto out = designer_ ? designer_->evaluate(batch) : design_on_sample(batch);
  std::vector<const graph::Graph*> designed;
  std::vector<std::size_t> at;
  for (std::size_t k = 0; k < out.size(); ++k)
    if (out[k].ok) designed.push_back(&batch[k].graph), at.push_back(k);
  const auto us = ranker_.predict_us(m_, designed);
  for (std::size_t j = 0; j < at.size(); ++j) {
    auto& e = out[at[j]];
    if (designer_) e.detail["cost_model_us"] = e.time_us;
    e.detail["learned_us"] = us[j];
    e.time_us = us[j];
    fill_rates(e, a_, m_.dtype, m_.n);
  }
  return out;
}

std::optional<models::SpmvRanker> load_spmv_ranker(const std::string& models_dir,
                                                   const std::string& arch, const char* name) {
  std::string why;
  auto r = models::SpmvRanker::find(models_dir.empty() ? default_models_dir() : models_dir, arch,
                                    &why, name);
  static std::atomic<bool> said{false};
  if (!r && !said.exchange(true))
    spdlog::warn("{}; candidates are ranked by the analytic cost model", why);
  return r;
}

std::string default_models_dir() {
  if (const char* d = std::getenv("SPARSETUNE_CONFIG_DIR"); d && *d)
    return std::string(d) + "/models";
  return std::string(SPARSETUNE_CONFIG_DIR) + "/models";
}

}  // namespace sparsetune::search
