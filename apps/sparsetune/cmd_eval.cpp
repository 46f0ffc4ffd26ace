// `sparsetune eval DB`: how close each predictor's pick is to the fastest measured candidate, from
// the tuning database (report/evaluators.hpp lists the predictors).
#include <spdlog/spdlog.h>

#include <memory>

#include "cli.hpp"
#include "core/error.hpp"
#include "db/db_export.hpp"
#include "io/file_bytes.hpp"
#include "report/evaluators.hpp"
#include "search/learned_evaluator.hpp"

namespace sparsetune::cli {

namespace {

// Tables longer than this show their worst rows only; the JSON (-o) has every row.
constexpr std::size_t kMaxRows = 40;

// What a row of the op's table stands for: a slice, a (matrix, N) case of SpMM, or a matrix.
const char* noun(const std::string& op) {
  if (op.rfind("sptv", 0) == 0) return "slices";
  return op.find(" n=") != std::string::npos ? "cases" : "matrices";
}

void print_eval(const report::PredictorEval& e) {
  std::printf("\n%s (%s)\n", e.predictor.c_str(), e.note.c_str());
  if (e.matrices.empty()) {
    std::printf("nothing it picked for has been measured\n");
    return;
  }
  std::vector<std::vector<std::string>> rows = {{"matrix", "op", "dtype", "ranked", "pick",
                                                 "oracle", "pick us", "oracle us",
                                                 "share of oracle"}};
  const std::size_t shown = e.matrices.size() > kMaxRows ? kMaxRows / 4 : e.matrices.size();
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& r = e.matrices[i];
    rows.push_back({r.name, r.op, r.dtype, std::to_string(r.ranked), r.pick, r.best,
                    fixed(r.pick_us, 2), fixed(r.oracle_us, 2), fixed(100 * r.share, 1) + " %"});
  }
  print_table(rows);
  if (shown < e.matrices.size())
    std::printf("(the %zu worst of %zu rows; -o writes them all)\n", shown, e.matrices.size());
  std::printf(
      "%s over %zu %s: top-1 %.1f %%, geometric mean %.1f %% of the oracle (min %.1f %%), "
      "%d within 10 %%\n",
      e.predictor.c_str(), e.matrices.size(), noun(e.matrices.front().op), 100 * e.top1,
      100 * e.geomean_share, 100 * e.min_share, e.within_10_percent);
}

}  // namespace

void add_eval_command(CLI::App& app, const GlobalOptions& g) {
  auto* cmd = app.add_subcommand(
      "eval", "Score the predictors against the measurements of a tuning database");
  struct Options {
    std::string db, out;
    std::vector<std::string> predictors;
    report::EvalOptions e;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("DB", o->db, "Tuning database, or a JSON export of one")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--predictor", o->predictors,
                  "Only these predictors (cost-model, spmv-rank, spmm-rank, crux, liteform-cell, "
                  "liteform-partitions, row-order, slice-gcn)");
  cmd->add_option("--only", o->e.only,
                  "Only these matrices (names as the database has them) or tensor files");
  cmd->add_option("-o,--out", o->out, "Also write the result as JSON to this file");
  cmd->add_option("--models-dir", o->e.models_dir, "Folder of the learned models (configs/models)");
  cmd->add_option("--arch", o->e.arch, "Architecture whose learned models are scored")
      ->capture_default_str();
  cmd->add_option("--model", o->e.model,
                  "A model file to score instead of the shipped one of its predictor (a "
                  "description .json, or a Slice-GCN .safetensors)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--test-split", o->e.test_split,
                "Each model on its held-out matrices or slices only (never trained on), as its "
                "file lists them");
  cmd->add_option("--data-dir", o->e.data_dir,
                  "Slice-GCN: read the timed tensors from this folder, by file name");
  cmd->callback([o, &g] {
    const auto db = db::open_database(o->db);
    o->e.database = o->db;
    if (o->e.models_dir.empty()) o->e.models_dir = search::default_models_dir();
    const auto run = report::run_evaluators(*db, o->e, o->predictors);
    nlohmann::json j = {{"database", o->db},
                        {"predictors", nlohmann::json::array()},
                        {"not_scored", nlohmann::json::array()}};
    for (const auto& e : run.evals) j["predictors"].push_back(report::to_json(e));
    for (const auto& [name, why] : run.skipped)
      j["not_scored"].push_back({{"predictor", name}, {"why", why}});
    if (!o->out.empty()) io::write_file_atomic(o->out, j.dump(2) + "\n");
    if (g.json) return print_json(j);
    for (const auto& e : run.evals) print_eval(e);
    if (!run.skipped.empty()) std::printf("\n");
    for (const auto& [name, why] : run.skipped)
      std::printf("%s: not scored: %s\n", name.c_str(), why.c_str());
  });
}

}  // namespace sparsetune::cli
