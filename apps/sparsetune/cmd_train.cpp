// `sparsetune train --model NAME|all --db DB [-o DIR]`: builds predictors from a tuning database
// (or a JSON export of one) and writes them under DIR/<arch>/ with a training report.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <tuple>

#include "cli.hpp"
#include "db/db_export.hpp"
#include "models/model_file.hpp"
#include "models/predictors.hpp"
#include "models/slice_gcn.hpp"
#include "search/learned_evaluator.hpp"

namespace sparsetune::cli {

namespace {

std::string pct(const nlohmann::json& j, const char* k) {
  return fixed(100 * j.value(k, 0.0), 1) + " %";
}

void print_report(const nlohmann::json& r) {
  if (r["model"] == "row-order") {  // a regression per order (and a classifier), by speed-up
    std::printf("row-order for %s (%s), trained on %s\n", r.value("arch", "?").c_str(),
                r.value("device", "?").c_str(),
                r["training_set"].value("database", std::string("?")).c_str());
    std::vector<std::vector<std::string>> rows = {{"", "records", "oracle", "predicted",
                                                   "share of the oracle's performance (mean)",
                                                   "within 4 %", "classified"}};
    for (const char* part : {"train", "test"}) {
      const auto& x = r[part];
      rows.push_back({part, std::to_string(x.value("records", 0)),
                      fixed(x.value("oracle_speedup", 0.0), 3) + "x",
                      fixed(x.value("predicted_speedup", 0.0), 3) + "x",
                      pct(x, "predicted_share_of_oracle_performance_mean"),
                      pct(x, "predicted_within_4pct"),
                      fixed(x.value("classified_speedup", 0.0), 3) + "x"});
    }
    print_table(rows);
    if (r["test"].contains("fixed_per_n_share_of_oracle_gain"))
      std::printf(
          "test: the predictor keeps %s of the oracle's gain, the best fixed order per N "
          "of the training records %s\n",
          pct(r["test"], "predicted_share_of_oracle_gain").c_str(),
          pct(r["test"], "fixed_per_n_share_of_oracle_gain").c_str());
    const auto& rep = r["test"].value("repeat", nlohmann::json::object());
    if (rep.value("records", 0) > 0)
      std::printf(
          "test records measured twice: %d; one collection's best order, timed in the other, "
          "keeps %s of its oracle's gain (the same order in %s); the predictor keeps %s\n",
          rep["records"].get<int>(), pct(rep, "share_of_oracle_gain").c_str(),
          pct(rep, "same_best").c_str(), pct(r["test"], "predicted_share_of_oracle_gain").c_str());
    if (r.contains("files"))
      for (const auto& f : r["files"]) std::printf("wrote %s\n", f.get<std::string>().c_str());
    return;
  }
  if (r["model"] == "slice-gcn") {  // a classifier of slices, judged by their times too
    const auto& x = r["test"];
    const auto& ts = r["training_set"];
    std::printf(
        "slice-gcn for %s (%s), trained on %s: %lld labelled slices of %lld tensors, %lld "
        "left to stage 1 (Dense)\n",
        r.value("arch", "?").c_str(), r.value("device", "?").c_str(),
        ts.value("database", "?").c_str(), static_cast<long long>(ts.value("labelled", 0)),
        static_cast<long long>(ts.value("tensors", 0)),
        static_cast<long long>(r["split"].value("dense_excluded", 0)));
    std::vector<std::vector<std::string>> rows = {{"held out", "slices", "accuracy",
                                                   "pick is the fastest", "within 5 %",
                                                   "time over the fastest (geo. mean)"}};
    for (const auto& [name, acc, by] :
         {std::tuple<const char*, const char*, const char*>{"Slice-GCN", "gcn_accuracy",
                                                            "gcn_by_time"},
          {"XGBoost (the model's globals)", "xgb_accuracy", "xgb_by_time"},
          {"structural rule", "rule_accuracy", "rule_by_time"}}) {
      const auto& b = x[by];
      rows.push_back({name, std::to_string(x.value("slices", 0)), pct(x, acc), pct(b, "fastest"),
                      pct(b, "within_5pct"), fixed(b.value("slowdown", 0.0), 3) + "x"});
    }
    print_table(rows);
    std::printf("Slice-GCN on its %lld training slices: %s\n",
                static_cast<long long>(r["train"].value("slices", 0)),
                pct(r["train"], "gcn_accuracy").c_str());
    if (r.contains("files"))
      for (const auto& f : r["files"]) std::printf("wrote %s\n", f.get<std::string>().c_str());
    return;
  }
  const auto& t = r["training_set"];
  const auto& s = r["split"];
  // Matrices are the unit of the split; the LiteForm predictors count (matrix, n) cases, the
  // rankings rows (measured candidates).
  const bool cases = t.contains("all_cases");
  std::printf("%s for %s (%s), trained on %s: %lld of %lld %s, %lld %s\n",
              r.value("model", "?").c_str(), r.value("arch", "?").c_str(),
              r.value("device", "?").c_str(), t.value("database", "?").c_str(),
              static_cast<long long>(s.value("train_matrices", 0)),
              static_cast<long long>(s.value("train_matrices", 0) + s.value("test_matrices", 0)),
              "matrices", static_cast<long long>(t.value(cases ? "all_cases" : "rows", 0)),
              cases ? "cases" : "rows");
  if (r["model"] == "crux") {  // a regression of two values, not a ranking
    std::vector<std::vector<std::string>> rows = {
        {"", "matrices", "MSE tau_c", "MSE tau_r", "hot or cold agrees",
         "same-graph point / search's best (geo. mean)", "within 10 %"}};
    for (const char* part : {"train", "test"}) {
      const auto& x = r[part];
      rows.push_back({part, std::to_string(x.value("matrices", 0)),
                      fixed(x.value("mse_tau_c", 0.0), 4), fixed(x.value("mse_tau_r", 0.0), 4),
                      pct(x, "hot_or_cold_agrees"), pct(x, "geomean_share_of_bo"),
                      pct(x, "within_10pct")});
    }
    print_table(rows);
    if (r.contains("files"))
      for (const auto& f : r["files"]) std::printf("wrote %s\n", f.get<std::string>().c_str());
    return;
  }
  if (r["model"] == "liteform-partitions") {  // a classifier judged by similarity too
    std::vector<std::vector<std::string>> rows = {
        {"", "cases", "accuracy", "similarity, eq. (1)", "cosine similarity, eq. (2)"}};
    for (const char* part : {"train", "test"}) {
      const auto& x = r[part];
      rows.push_back({part, std::to_string(x.value("cases", 0)), pct(x, "accuracy"),
                      fixed(x.value("similarity", 0.0), 3),
                      fixed(x.value("cosine_similarity", 0.0), 3)});
    }
    print_table(rows);
    if (r.contains("files"))
      for (const auto& f : r["files"]) std::printf("wrote %s\n", f.get<std::string>().c_str());
    return;
  }
  if (r["model"] == "liteform-cell") {  // a classifier
    std::vector<std::vector<std::string>> rows = {{"", "cases", "CELL wins", "accuracy"}};
    for (const char* part : {"train", "test"}) {
      const auto& x = r[part];
      rows.push_back({part, std::to_string(x.value("cases", 0)),
                      std::to_string(x.value("cell_wins", 0)), pct(x, "accuracy")});
    }
    print_table(rows);
    if (r.contains("files"))
      for (const auto& f : r["files"]) std::printf("wrote %s\n", f.get<std::string>().c_str());
    return;
  }
  std::vector<std::vector<std::string>> rows = {
      {"", "matrices", "MSE", "top-1", "share of oracle (geo. mean)", "worst"}};
  auto row = [&](const std::string& name, const nlohmann::json& x, bool mse) {
    rows.push_back({name, std::to_string(x.value("matrices", 0)),
                    mse ? fixed(x.value("mse", 0.0), 4) : "-", pct(x, "top1_accuracy"),
                    pct(x, "geomean_share_of_oracle"), pct(x, "min_share_of_oracle")});
  };
  row("train", r["train"], true);
  row("test", r["test"], true);
  row("test, cost model's candidates", r["test_on_cost_model_candidates"], true);
  row("cost model, test", r["cost_model_test"], false);
  print_table(rows);
  if (r.contains("files"))
    for (const auto& f : r["files"]) std::printf("wrote %s\n", f.get<std::string>().c_str());
}

}  // namespace

void add_train_command(CLI::App& app, const GlobalOptions& g) {
  auto* cmd = app.add_subcommand("train", "Build the predictors from a tuning database");
  struct Options {
    std::string model = "all", db, holdout_like;
    bool dry = false;
    models::TrainOptions t;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("--model", o->model,
                  "Predictor to build (spmv-rank, spmm-rank, crux, liteform-cell, "
                  "liteform-partitions, slice-gcn, row-order), or all")
      ->capture_default_str();
  cmd->add_option("--db", o->db, "Tuning database, or a JSON export of one (db export)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--out", o->t.out_dir,
                  "Models folder; each model goes to OUT/<arch>/ (default: configs/models)");
  cmd->add_flag("--no-write", o->dry, "Train and report, write nothing");
  cmd->add_option("--arch", o->t.arch, "Train on this architecture's measurements (sm_90)");
  cmd->add_option("--seed", o->t.split.seed, "Seed of the split and of XGBoost")
      ->capture_default_str();
  auto* fraction = cmd->add_option("--test-fraction", o->t.split.test_fraction,
                                   "Share of the matrices held out for the test")
                       ->check(CLI::Range(0.05, 0.95))
                       ->capture_default_str();
  cmd->add_option("--holdout-like", o->holdout_like,
                  "Hold out exactly the matrices this model file held out (its split.test) "
                  "instead of drawing a split: a model trained on a larger database compared on "
                  "the same matrices")
      ->check(CLI::ExistingFile)
      ->excludes(fraction);
  cmd->add_option("--folds", o->t.split.folds, "Cross-validation folds of the training part")
      ->check(CLI::Range(2, 20))
      ->capture_default_str();
  cmd->add_option("--bag", o->t.bag,
                  "spmv-rank, spmm-rank: each booster is the mean of this many, trained under "
                  "the seeds SEED, SEED+1, ... (cross-validation scores single boosters); "
                  "slice-gcn: a bag of this many networks, their probabilities averaged")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--epochs", o->t.epochs, "slice-gcn: training epochs (default: Slice-GCN's)")
      ->check(CLI::Range(1, 100000));
  cmd->add_flag("--fiber-globals", o->t.fiber_globals,
                "slice-gcn: read the 5 features of a slice's non-empty fibers after the paper's 9 "
                "globals (as the shipped model does)");
  cmd->add_flag("--degree-buckets", o->t.degree_buckets,
                "slice-gcn: give each node its degree's power-of-two bucket after the 4 node "
                "features");
  cmd->add_option("--global-bins", o->t.global_bins,
                  "slice-gcn: each global also enters piecewise-linearly over this many "
                  "quantile bins (0: standardized alone)")
      ->check(CLI::Range(0, models::kMaxGlobalBins));
  cmd->add_option("--average-last", o->t.average_last,
                  "slice-gcn: the model is the mean of its weights over this many last epochs")
      ->check(kNonNegative);
  cmd->add_option("--soft-labels", o->t.soft_labels,
                  "slice-gcn: learn from each slice's measured times, a format r slower than the "
                  "fastest weighted exp(-ln(1 + r) / THIS) (0: the label alone)")
      ->check(kNonNegative);
  cmd->add_flag("--no-class-weights", o->t.no_class_weights,
                "row-order: weigh every sample alike, as row-orders train --no-class-weights does "
                "(default: inversely to the frequency of its best order)");
  cmd->add_option("--order-classes", o->t.order_classes,
                  "row-order: choose among the original order and the K - 1 orders that add most "
                  "to the training records' oracle, as row-orders train --classes (0: all)")
      ->check(CLI::Range(0, 11))
      ->capture_default_str();
  cmd->add_flag("--no-priors", o->t.no_priors,
                "row-order: regress each order's ratio from zero, as row-orders train --no-priors "
                "(default: from its mean over the training records at each N)");
  add_candidates_option(*cmd, o->t.order_candidates, "--order-candidates",
                        "row-order: learn the Hamming orders timed under this rule, the other "
                        "orders from every collection. ");
  cmd->add_option("--data-dir", o->t.data_dir,
                  "slice-gcn: find the tensors here by file name (default: the paths the "
                  "database records)");
  cmd->add_option("--threads", o->t.threads,
                  "XGBoost threads (1: reproducible bit for bit); Slice-GCN's, whose model is "
                  "the same for any number")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->callback([o, &g, cmd] {
    models::check_train_request(o->model, o->t, !o->holdout_like.empty());
    // One predictor's options name that predictor (or all): elsewhere they would do nothing.
    static const std::vector<std::pair<const char*, const char*>> served_by = {
        {"--no-class-weights", "row-order"}, {"--order-classes", "row-order"},
        {"--no-priors", "row-order"},        {"--order-candidates", "row-order"},
        {"--epochs", "slice-gcn"},           {"--fiber-globals", "slice-gcn"},
        {"--degree-buckets", "slice-gcn"},   {"--global-bins", "slice-gcn"},
        {"--average-last", "slice-gcn"},     {"--soft-labels", "slice-gcn"},
        {"--data-dir", "slice-gcn"}};
    for (const auto& [flag, model] : served_by)
      if (cmd->count(flag) && o->model != "all" && o->model != model)
        throw Error(std::string("train ") + flag + " applies to --model " + model +
                    " (or all), not '" + o->model + "'");
    if (!o->holdout_like.empty()) {
      o->t.split.held_out =
          models::held_out_matrices(models::read_model_file(o->holdout_like), o->holdout_like);
      o->t.split.held_out_from = std::filesystem::path(o->holdout_like).filename().string();
    }
    // An empty -o is a mistake (a variable unset in a script), not a request for the default:
    // the default is the shipped models, which it would overwrite.
    if (cmd->count("--out") && o->t.out_dir.empty())
      throw Error("train -o: the models folder is empty; leave -o out to write configs/models");
    if (!o->t.out_dir.empty() && std::filesystem::exists(o->t.out_dir) &&
        !std::filesystem::is_directory(o->t.out_dir))
      throw Error("train -o " + o->t.out_dir + ": exists and is not a folder");
    const auto db = db::open_database(o->db);
    if (o->dry)
      o->t.out_dir.clear();
    else if (o->t.out_dir.empty())
      o->t.out_dir = search::default_models_dir();
    o->t.database = std::filesystem::path(o->db).filename().string();
    std::vector<const models::Predictor*> which;
    if (o->model == "all")
      for (const auto& p : models::predictors()) which.push_back(&p);
    else
      which.push_back(&models::find_predictor(o->model));
    nlohmann::json all = nlohmann::json::array();
    std::size_t trained = 0;
    for (const auto* p : which) {
      models::TrainResult r;
      try {
        r = p->train(*db, o->t);
      } catch (const models::NothingToLearn& e) {
        if (which.size() == 1) throw;
        if (!g.json) std::printf("%s: skipped: %s\n", p->name, e.what());
        all.push_back({{"model", p->name}, {"skipped", e.what()}});
        continue;
      }
      if (!g.json) print_report(r.report);
      all.push_back(r.report);
      ++trained;
    }
    // Every predictor skipped: the database has nothing to train on, which is an error.
    if (trained == 0)
      throw Error(o->db + ": nothing to train on: every predictor was skipped (" +
                  std::to_string(which.size()) + "; collect measures a corpus)");
    if (g.json) print_json(all.size() == 1 ? all[0] : all);
  });
}

}  // namespace sparsetune::cli
