// `sparsetune eval DB`: how close each predictor's pick is to the fastest measured candidate, per
// matrix, from the tuning database: the cost model, and the learned ranking of the architecture.
#include <spdlog/spdlog.h>

#include <memory>

#include "cli.hpp"
#include "core/error.hpp"
#include "db/db_export.hpp"
#include "io/file_bytes.hpp"
#include "report/eval.hpp"
#include "search/learned_evaluator.hpp"

namespace sparsetune::cli {

namespace {

void print_eval(const report::PredictorEval& e) {
  std::printf("\n%s (%s)\n", e.predictor.c_str(), e.note.c_str());
  if (e.matrices.empty()) {
    std::printf("no matrix has measured candidates that it ranked\n");
    return;
  }
  std::vector<std::vector<std::string>> rows = {
      {"matrix", "op", "dtype", "ranked", "pick us", "oracle us", "share of oracle"}};
  for (const auto& r : e.matrices)
    rows.push_back({r.name, r.op, r.dtype, std::to_string(r.ranked), fixed(r.pick_us, 2),
                    fixed(r.oracle_us, 2), fixed(100 * r.share, 1) + " %"});
  print_table(rows);
  std::printf(
      "%s over %zu matrices: top-1 %.0f %%, geometric mean %.1f %% of the oracle (min %.1f %%), "
      "%d within 10 %%\n",
      e.predictor.c_str(), e.matrices.size(), 100 * e.top1, 100 * e.geomean_share,
      100 * e.min_share, e.within_10_percent);
}

}  // namespace

void add_eval_command(CLI::App& app, const GlobalOptions& g) {
  auto* cmd = app.add_subcommand(
      "eval", "Score the predictors against the measurements of a tuning database");
  struct Options {
    std::string db, out, models_dir, arch = "sm_90", model;
    std::vector<std::string> only;
    bool test_split = false;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("DB", o->db, "Tuning database, or a JSON export of one")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--only", o->only, "Only these matrices (names as the database has them)");
  cmd->add_option("-o,--out", o->out, "Also write the result as JSON to this file");
  cmd->add_option("--models-dir", o->models_dir, "Folder of the learned models (configs/models)");
  cmd->add_option("--arch", o->arch, "Architecture whose learned model is scored")
      ->capture_default_str();
  cmd->add_option("--model", o->model,
                  "A learned model's description file to score instead of the shipped one");
  cmd->add_flag(
      "--test-split", o->test_split,
      "Only the learned model's test matrices (never trained on), as its file lists them");
  cmd->callback([o, &g] {
    const auto db = db::open_database(o->db);
    // The learned rankings: --model's, else the shipped SpMV and SpMM ones that are current.
    std::vector<models::SpmvRanker> rankers;
    if (!o->model.empty()) {
      rankers.push_back(models::SpmvRanker::read(o->model));
    } else {
      for (const char* name : {models::kSpmvRankName, models::kSpmmRankName}) {
        std::string why;
        if (auto r = models::SpmvRanker::find(
                o->models_dir.empty() ? search::default_models_dir() : o->models_dir, o->arch, &why,
                name))
          rankers.push_back(std::move(*r));
      }
    }
    // --test-split: each ranking on its own held-out matrices, the cost model on all of them.
    std::vector<std::vector<std::string>> only(rankers.size(), o->only);
    std::vector<std::string> all_only = o->only;
    if (o->test_split) {
      if (rankers.empty())
        throw Error("eval --test-split: no current learned model to take the split from");
      all_only.clear();
      for (std::size_t k = 0; k < rankers.size(); ++k) {
        only[k] = rankers[k].test_matrices();
        if (only[k].empty())
          throw Error("eval --test-split: " + rankers[k].file().model +
                      "'s file lists no test matrices");
        all_only.insert(all_only.end(), only[k].begin(), only[k].end());
      }
    }
    std::vector<report::PredictorEval> evals = {report::evaluate_cost_model(*db, all_only)};
    for (std::size_t k = 0; k < rankers.size(); ++k) {
      evals.push_back(report::evaluate_spmv_ranker(*db, rankers[k], only[k]));
      evals.push_back(report::evaluate_spmv_ranker(*db, rankers[k], only[k], true));
    }
    // MatXtract's crux predictor, when one ships for the architecture and no --model is given.
    std::string why_no_crux;
    const auto crux =
        o->model.empty() ? models::CruxPredictor::find(
                               o->models_dir.empty() ? search::default_models_dir() : o->models_dir,
                               o->arch, &why_no_crux)
                         : std::nullopt;
    if (crux) {
      std::vector<std::string> crux_only = o->only;
      if (o->test_split) crux_only = crux->file().split.value("test", std::vector<std::string>{});
      if (!o->test_split || !crux_only.empty())
        evals.push_back(report::evaluate_crux(*db, *crux, crux_only));
    }
    nlohmann::json j = {{"database", o->db}, {"predictors", nlohmann::json::array()}};
    for (const auto& e : evals) j["predictors"].push_back(report::to_json(e));
    if (!o->out.empty()) io::write_file_atomic(o->out, j.dump(2) + "\n");
    if (g.json) return print_json(j);
    if (evals.size() == 1 && evals[0].matrices.empty()) {
      std::printf("%s: no matrix has measured candidates that the cost model ranked\n",
                  o->db.c_str());
      return;
    }
    for (const auto& e : evals) print_eval(e);
  });
}

}  // namespace sparsetune::cli
