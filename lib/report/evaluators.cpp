#include "report/evaluators.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "core/error.hpp"
#include "models/model_file.hpp"
#include "models/row_order_rows.hpp"
#include "models/slice_timing_rows.hpp"

namespace sparsetune::report {

namespace {

namespace fs = std::filesystem;
using Evals = std::vector<PredictorEval>;

// Whether `name`'s model is scored: the shipped one when no --model is given, else only the
// --model's own predictor.
bool scores(const EvalOptions& o, const std::string& name, std::string* why) {
  if (o.model.empty() || model_kind(o.model) == name) return true;
  *why = "--model is a " + model_kind(o.model) + " model";
  return false;
}

std::optional<models::SpmvRanker> ranker(const EvalOptions& o, const char* name, std::string* why) {
  if (!scores(o, name, why)) return std::nullopt;
  if (!o.model.empty()) return models::SpmvRanker::read(o.model);
  return models::SpmvRanker::find(o.models_dir, o.arch, why, name);
}

Evals eval_rank(const db::TuningDb& db, const EvalOptions& o, std::string* why, const char* name) {
  const auto r = ranker(o, name, why);
  if (!r) return {};
  auto only = o.only;
  if (o.test_split) {
    only = r->test_matrices();
    if (only.empty()) return *why = r->file().model + "'s file lists no test matrices", Evals{};
  }
  return {evaluate_spmv_ranker(db, *r, only), evaluate_spmv_ranker(db, *r, only, true)};
}

Evals eval_spmv_rank(const db::TuningDb& db, const EvalOptions& o, std::string* why) {
  return eval_rank(db, o, why, models::kSpmvRankName);
}

Evals eval_spmm_rank(const db::TuningDb& db, const EvalOptions& o, std::string* why) {
  return eval_rank(db, o, why, models::kSpmmRankName);
}

// The cost model on every matrix; with --test-split, on the learned rankings' held-out ones.
Evals eval_cost_model(const db::TuningDb& db, const EvalOptions& o, std::string* why) {
  auto only = o.only;
  if (o.test_split) {
    only.clear();
    for (const char* name : {models::kSpmvRankName, models::kSpmmRankName}) {
      std::string ignored;
      if (const auto r = ranker(o, name, &ignored)) {
        const auto t = r->test_matrices();
        only.insert(only.end(), t.begin(), t.end());
      }
    }
    if (only.empty())
      return *why = "no learned ranking to take the held-out matrices from", Evals{};
  }
  return {evaluate_cost_model(db, only)};
}

Evals eval_crux(const db::TuningDb& db, const EvalOptions& o, std::string* why) {
  if (!scores(o, models::kCruxName, why)) return {};
  auto crux = o.model.empty() ? models::CruxPredictor::find(o.models_dir, o.arch, why)
                              : std::optional(models::CruxPredictor::read(o.model));
  if (!crux) return {};
  auto only = o.only;
  if (o.test_split) {
    only = crux->file().split.value("test", std::vector<std::string>{});
    if (only.empty()) return *why = "crux's file lists no test matrices", Evals{};
  }
  return {evaluate_crux(db, *crux, only)};
}

Evals eval_row_order(const db::TuningDb& db, const EvalOptions& o, std::string* why) {
  if (!scores(o, models::kRowOrderName, why)) return {};
  auto model = o.model.empty() ? models::RowOrderModel::find(o.models_dir, o.arch, why)
                               : std::optional(models::RowOrderModel::read(o.model));
  if (!model) return {};
  const auto rows =
      models::read_row_order_rows(db, model->file().arch, o.database, model->candidates());
  if (rows.records.empty())
    return *why = "no row-order times for " + model->file().arch +
                  " (collect --op spmm --row-orders measures them)",
           Evals{};
  auto only = o.only;
  if (o.test_split) {
    only = model->file().split.value("test", std::vector<std::string>{});
    if (only.empty()) return *why = "row-order's file lists no test matrices", Evals{};
  }
  Evals out = {evaluate_row_order(rows.records, *model, only)};
  // A model without the direct classifier has no second pick to score.
  if (model->has_classifier()) out.push_back(evaluate_row_order(rows.records, *model, only, true));
  return out;
}

// The held-out matrices of a LiteForm model's file, or `only`.
std::vector<std::string> liteform_only(const EvalOptions& o, const models::ModelFile& f,
                                       std::string* why) {
  if (!o.test_split) return o.only;
  auto t = f.split.value("test", std::vector<std::string>{});
  if (t.empty()) *why = f.model + "'s file lists no test matrices";
  return t;
}

template <class Model>
Evals eval_liteform(const db::TuningDb& db, const EvalOptions& o, std::string* why,
                    const char* name,
                    PredictorEval (*evaluate)(const models::LiteformCases&, const Model&,
                                              const std::vector<std::string>&)) {
  if (!scores(o, name, why)) return {};
  auto model = o.model.empty() ? Model::find(o.models_dir, o.arch, why)
                               : std::optional(Model::read(o.model));
  if (!model) return {};
  const auto only = liteform_only(o, model->file(), why);
  if (o.test_split && only.empty()) return {};
  const auto cases = models::read_liteform_cases(db, model->file().arch);
  if (cases.usable.empty())
    return *why = "no SpMM case with CELL and the CSR family measured for " + model->file().arch,
           Evals{};
  return {evaluate(cases, *model, only)};
}

Evals eval_liteform_cell(const db::TuningDb& db, const EvalOptions& o, std::string* why) {
  return eval_liteform<models::CellPredictor>(db, o, why, models::kCellName,
                                              &evaluate_liteform_cell);
}

Evals eval_liteform_partitions(const db::TuningDb& db, const EvalOptions& o, std::string* why) {
  return eval_liteform<models::PartitionPredictor>(db, o, why, models::kPartitionsName,
                                                   &evaluate_liteform_partitions);
}

std::string slice_model_path(const EvalOptions& o) {
  return o.model.empty() ? o.models_dir + "/" + o.arch + "/slice_gcn.safetensors" : o.model;
}

Evals eval_slice_gcn(const db::TuningDb& db, const EvalOptions& o, std::string* why) {
  if (!scores(o, "slice-gcn", why)) return {};
  const auto path = slice_model_path(o);
  if (o.model.empty() && !fs::exists(path)) return *why = path + " does not exist", Evals{};
  models::GcnModelInfo info;
  const auto model = models::SliceGcn::load(path, &info);
  const auto rows = models::read_slice_timing_rows(db, info.arch, o.data_dir, o.database);
  if (rows.timings.empty())
    return *why = "no slice timings for " + info.arch + " (collect --op sptv measures them)",
           Evals{};
  auto labels = models::label_slices(rows.timings);
  if (o.test_split && info.test_slices.empty())
    return *why = path + " lists no held-out slices", Evals{};
  const std::set<std::string> test(info.test_slices.begin(), info.test_slices.end());
  labels.erase(std::remove_if(
                   labels.begin(), labels.end(),
                   [&](const models::SliceLabel& l) {
                     if (o.test_split && !test.count(models::slice_key(l.tensor, l.mode, l.slice)))
                       return true;
                     const auto file = fs::path(l.tensor).filename().string();
                     return !o.only.empty() &&
                            std::find(o.only.begin(), o.only.end(), file) == o.only.end() &&
                            std::find(o.only.begin(), o.only.end(), l.tensor) == o.only.end();
                   }),
               labels.end());
  if (labels.empty()) return *why = "no labelled slice left to score", Evals{};
  const double sp = info.sparsity_threshold;
  return {evaluate_slice_formats(labels, "", sp, &model),
          evaluate_slice_formats(labels, "", sp, nullptr)};
}

}  // namespace

std::string model_kind(const std::string& path) {
  if (fs::path(path).extension() == ".safetensors") return "slice-gcn";
  return models::read_model_file(path).model;
}

const std::vector<Evaluator>& evaluators() {
  static const std::vector<Evaluator> all = {
      {"cost-model", "the analytic cost model's predictions stored beside the candidates it ranked",
       &eval_cost_model},
      {"spmv-rank", "the learned SpMV ranking, over all measured candidates and the cost model's",
       &eval_spmv_rank},
      {"spmm-rank", "the learned SpMM ranking, likewise", &eval_spmm_rank},
      {"crux", "MatXtract's crux (tau_c, tau_r) against each crux search's fastest point",
       &eval_crux},
      {"liteform-cell",
       "LiteForm's CELL or not: the side it picks against the faster of CELL and the rest",
       &eval_liteform_cell},
      {"liteform-partitions",
       "LiteForm's CELL partition count: its fastest graph against CELL's fastest",
       &eval_liteform_partitions},
      {"row-order",
       "the row-order predictor (regression and direct classifier) against the fastest order",
       &eval_row_order},
      {"slice-gcn", "Slice-GCN (and the structural rule) against each slice's fastest format",
       &eval_slice_gcn},
  };
  return all;
}

EvalRun run_evaluators(const db::TuningDb& db, const EvalOptions& o,
                       const std::vector<std::string>& names) {
  for (const auto& n : names)
    if (std::none_of(evaluators().begin(), evaluators().end(),
                     [&](const Evaluator& e) { return n == e.name; })) {
      std::string known;
      for (const auto& e : evaluators()) known += std::string(known.empty() ? "" : ", ") + e.name;
      throw Error("eval: no predictor named '" + n + "' (known: " + known + ")");
    }
  // --only names the database does not hold are a mistake, not matrices scored as nothing. (Slice
  // scores take tensor files, which are checked where they are read.)
  if (!o.only.empty()) {
    const auto held = db.matrices();
    for (const auto& n : o.only)
      if (n.find('/') == std::string::npos && n.find(".tns") == std::string::npos &&
          n.find(".safetensors") == std::string::npos &&
          std::none_of(held.begin(), held.end(),
                       [&](const db::MatrixRow& m) { return m.name == n; }))
        throw Error("eval --only: the database holds no matrix named '" + n + "'");
  }
  EvalRun run;
  for (const auto& e : evaluators()) {
    if (!names.empty() && std::find(names.begin(), names.end(), e.name) == names.end()) continue;
    std::string why;
    auto evals = e.evaluate(db, o, &why);
    // A score over no matrix is no score (its zeros would read as a predictor always wrong).
    std::erase_if(evals, [](const PredictorEval& x) { return x.matrices.empty(); });
    if (evals.empty())
      run.skipped.emplace_back(
          e.name, !why.empty()   ? why
                  : o.test_split ? "none of the matrices its file holds out is in the database"
                                 : "nothing it picked for has been measured");
    for (auto& x : evals) run.evals.push_back(std::move(x));
  }
  // Nothing scored is no answer: an error that says why for each predictor asked, not an empty
  // table and success.
  if (run.evals.empty()) {
    std::string why;
    for (const auto& [name, w] : run.skipped) why += "; " + name + ": " + w;
    throw Error(std::string(o.test_split ? "eval --test-split" : "eval") + ": nothing to score" +
                why);
  }
  return run;
}

}  // namespace sparsetune::report
