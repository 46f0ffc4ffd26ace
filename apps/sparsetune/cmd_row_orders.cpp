// `sparsetune row-orders FILE`: the row permutations of output-stationary SpMM side by side
// (their cost, the busiest warp, the B lines per CTA step), and one of them written out.
// `row-orders collect LIST -o T.csv` times the SpMM kernel under every order on the GPU;
// `row-orders train T.csv -o DIR` trains the predictor of the best order from those times.
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <set>
#include <string>

#include "cli.hpp"
#include "core/permute.hpp"
#include "core/row_orders.hpp"
#include "io/file_bytes.hpp"
#include "io/matrix_file.hpp"
#include "models/row_order_model.hpp"
#include "search/collect.hpp"
#include "search/row_order_timings.hpp"

namespace sparsetune::cli {

CLI::Option* add_candidates_option(CLI::App& cmd, row_orders::Candidates& into,
                                   const std::string& flag, const std::string& serves) {
  return cmd
      .add_option_function<std::string>(
          flag, [&into](const std::string& s) { into = row_orders::parse_candidates(s); },
          serves +
              "Where the Hamming orders take their candidates: shared-lines (rows sharing a line "
              "of B with the reference first) or matrix (the first rows not placed, in the "
              "matrix's order)")
      ->check(CLI::IsMember({"matrix", "shared-lines"}))
      ->default_str(row_orders::name(into));
}

namespace {

void add_collect(CLI::App& cmd, const GlobalOptions& g) {
  struct Args {
    std::string list, out, gen_dir = "generated";
    search::RowOrderTimingOptions t;
  };
  auto o = std::make_shared<Args>();
  auto* c = cmd.add_subcommand(
      "collect", "Time output-stationary SpMM under every row order on the GPU (resumable CSV)");
  c->add_option("LIST", o->list,
                "Matrices: a list as `collect` reads it (PATH or gen KIND ... lines), a folder or "
                "one matrix file")
      ->required();
  c->add_option("-o,--out", o->out, "The CSV written; matrices already in it are skipped")
      ->required();
  auto* n_opt =
      c->add_option("--n", o->t.n, "Columns of B (several allowed)")->capture_default_str();
  c->add_flag("--n-square", o->t.n_square,
              "N = A's column count: B and C as large as A, the paper's setting (square matrices "
              "of at most 32,768 rows)")
      ->excludes(n_opt);
  c->add_option("--dtype", o->t.dtype, "f32 or f64")
      ->check(CLI::IsMember({"f32", "f64"}))
      ->capture_default_str();
  c->add_option("--runs", o->t.runs, "Timed runs per order")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  c->add_option("--kernel", o->t.kernel,
                "lanes: the search's warp-per-row kernel, lanes over B's columns; stationary: "
                "Alg. 1 as written, lanes over a row's entries, column-major B")
      ->check(CLI::IsMember({"stationary", "lanes"}))
      ->capture_default_str();
  c->add_option("--tn", o->t.tn, "stationary: columns of C a CTA covers")
      ->check(CLI::Range(1, 32))
      ->capture_default_str();
  c->add_option("--warps", o->t.warps,
                "Warps per CTA, N_w (0: the kernel's own, 4 for lanes, 32 for stationary)")
      ->check(CLI::Range(0, 32))
      ->capture_default_str();
  c->add_option("--ctas-per-sm", o->t.ctas_per_sm,
                "CTAs the grid holds per multiprocessor, each walking row strips in turn (0: "
                "uncapped for lanes, 2 for stationary)")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  add_candidates_option(*c, o->t.candidates);
  c->add_option("--gen-dir", o->gen_dir, "Folder of the generated matrices")->capture_default_str();
  c->callback([o, &g] {
    const auto r = search::collect_row_orders(
        o->list, o->out, o->gen_dir, o->t, [&g](const search::RowOrderOutcome& x) {
          if (g.json) return;
          if (x.error.empty())
            std::fprintf(stderr, "%s done\n", x.name.c_str());
          else
            std::fprintf(stderr, "%s failed: %s\n", x.name.c_str(), x.error.c_str());
          std::fflush(stderr);
        });
    std::vector<std::vector<std::string>> rows = {
        {"matrix", "nnz", "N", "original us", "best", "best us", "notes"}};
    for (const auto& x : r.items) {
      if (!x.error.empty()) rows.push_back({x.name, "-", "-", "-", "-", "-", x.error});
      for (const auto& rec : x.records) {
        const int b = models::best_order(rec);
        rows.push_back(
            {rec.matrix, std::to_string(rec.nnz), std::to_string(rec.n), fixed(rec.time_us[0], 2),
             b < 0 ? "-" : row_orders::name(row_orders::all_orders()[b]),
             b < 0 ? "-" : fixed(rec.time_us[b], 2), rec.notes.empty() ? "-" : rec.notes});
      }
    }
    if (g.json)
      print_json({{"wrote", o->out}, {"records", r.records}, {"failed", r.failed}});
    else
      print_table(rows);
    if (r.failed > 0) throw Error(std::to_string(r.failed) + " matrices failed (see above)");
  });
}

void add_train(CLI::App& cmd, const GlobalOptions& g) {
  struct Args {
    std::string timings, out, arch = "sm_90", device, report;
    models::RowOrderTrainOptions t;
    bool no_weights = false, no_priors = false;
  };
  auto o = std::make_shared<Args>();
  auto* c = cmd.add_subcommand(
      "train", "Train the row-order predictor from `row-orders collect` times (held-out report)");
  c->add_option("TIMINGS", o->timings, "The CSV of `row-orders collect` (.csv or .csv.gz)")
      ->required();
  c->add_option("-o,--out", o->out, "Model folder (e.g. configs/models/sm_90)")->required();
  c->add_option("--arch", o->arch, "Architecture the times were measured on")
      ->capture_default_str();
  c->add_option("--device", o->device, "Device the times were measured on (recorded)");
  c->add_option("--holdout", o->t.test_fraction, "Share of the matrices held out")
      ->check(CLI::Range(0.05, 0.9))
      ->capture_default_str();
  c->add_option("--seed", o->t.seed, "Seed of the split")->capture_default_str();
  c->add_option("--rounds", o->t.xgb.rounds,
                "The regressions' boosting rounds (default: chosen by --inner-folds "
                "cross-validation among 0, 5, 10, 20 and 40; the classifier's: 20)")
      ->check(CLI::Range(0, 100000));
  c->add_option("--inner-folds", o->t.inner_folds,
                "Folds of the training matrices the rounds are chosen over (0: --rounds)")
      ->check(CLI::Range(0, 20))
      ->capture_default_str();
  c->add_option("--max-depth", o->t.xgb.max_depth, "Tree depth")
      ->check(CLI::Range(1, 32))
      ->capture_default_str();
  c->add_flag("--no-class-weights", o->no_weights,
              "Weigh every sample alike (default: inversely to its best order's frequency)");
  c->add_option("--classes", o->t.classes,
                "Orders the model chooses among: the original and the K - 1 that add most to the "
                "training records' oracle, one at a time (the paper's Fig. 10; 0: all)")
      ->check(CLI::Range(0, 11))
      ->capture_default_str();
  c->add_flag("--no-priors", o->no_priors,
              "Regress each order's ratio from zero (default: from its mean over the training "
              "records at each N, with few shallow rounds: the fixed order per N is the baseline)");
  c->add_option("--eta", o->t.xgb.eta, "Learning rate")
      ->check(CLI::Range(1e-6, 1.0))
      ->capture_default_str();
  c->add_option("--report", o->report, "Also write the full report (every held-out pick) here");
  c->callback([o, &g, c] {
    o->t.class_weights = !o->no_weights;
    o->t.priors = !o->no_priors;
    if (c->count("--rounds") && !c->count("--inner-folds")) o->t.inner_folds = 0;
    // Where the report goes is checked before the model is written, not after.
    if (!o->report.empty()) {
      const auto parent = std::filesystem::path(o->report).parent_path();
      if (std::filesystem::is_directory(o->report))
        throw Error("row-orders train --report " + o->report + ": a folder, not a file");
      if (!parent.empty() && !std::filesystem::is_directory(parent))
        throw Error("row-orders train --report " + o->report + ": no folder " + parent.string());
    }
    const auto records = models::read_row_order_csv(o->timings);
    nlohmann::json rep;
    const auto m = models::RowOrderModel::train(records, o->t, &rep);
    models::ModelFile f;
    f.arch = o->arch;
    f.device = o->device;
    const std::time_t now = std::time(nullptr);
    char day[16];
    std::strftime(day, sizeof day, "%Y-%m-%d", std::gmtime(&now));
    f.created = day;
    const auto paths = m.write(o->out, f);
    if (!o->report.empty()) io::write_file_atomic(o->report, rep.dump(2) + "\n");
    if (g.json) {
      rep["wrote"] = paths;
      return print_json(rep);
    }
    std::vector<std::vector<std::string>> rows = {
        {"records", "oracle", "predicted", "share", "gain share", "perf share (mean)", "classified",
         "share", "exact", "within 4%", "within 10%", "fixed per N gain share"}};
    for (const char* side : {"train", "test"}) {
      const auto& s = rep[side];
      rows.push_back(
          {std::string(side) + " " + std::to_string(s["records"].get<int>()),
           fixed(s["oracle_speedup"].get<double>(), 3) + "x",
           fixed(s["predicted_speedup"].get<double>(), 3) + "x",
           fixed(100 * s["predicted_share_of_oracle"].get<double>(), 1) + "%",
           fixed(100 * s["predicted_share_of_oracle_gain"].get<double>(), 1) + "%",
           fixed(100 * s["predicted_share_of_oracle_performance_mean"].get<double>(), 1) + "%",
           fixed(s["classified_speedup"].get<double>(), 3) + "x",
           fixed(100 * s["classified_share_of_oracle"].get<double>(), 1) + "%",
           fixed(100 * s["predicted_exact"].get<double>(), 1) + "%",
           fixed(100 * s["predicted_within_4pct"].get<double>(), 1) + "%",
           fixed(100 * s["predicted_within_10pct"].get<double>(), 1) + "%",
           fixed(100 * s["fixed_per_n_share_of_oracle_gain"].get<double>(), 1) + "%"});
    }
    print_table(rows);
    for (const auto& p : paths) std::printf("wrote %s\n", p.c_str());
  });
}

}  // namespace

void add_row_orders_command(CLI::App& app, const GlobalOptions& g) {
  struct Args {
    std::string file, order, out;
    row_orders::Options o;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "row-orders", "Row permutations for SpMM: each one's cost, busiest warp and B lines read");
  cmd->add_option("FILE", args->file, "Matrix: .mtx, .mtx.gz or .safetensors");
  cmd->require_subcommand(0, 1);
  add_collect(*cmd, g);
  add_train(*cmd, g);
  cmd->add_option("--warps", args->o.warps, "Warps per CTA (rows striped over them)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--threads", args->o.threads, "Threads sharing a row")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--line", args->o.line, "Columns per cache line of B")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--window", args->o.window, "Candidates of each Hamming search")
      ->check(CLI::Range(1, 1 << 20));
  add_candidates_option(*cmd, args->o.candidates);
  cmd->add_option("--order", args->order, "Write the matrix in this order (with -o)");
  cmd->add_option("-o,--out", args->out, "Output matrix file (with --order)");
  cmd->callback([&g, args, cmd] {
    if (!cmd->get_subcommands().empty()) return;  // collect or train ran
    if (args->file.empty())
      throw Error("row-orders: a matrix FILE (or collect / train) is required");
    if (args->order.empty() != args->out.empty())
      throw Error("row-orders: --order and -o go together");
    const Csr64 a = io::read_matrix(args->file);
    if (!args->order.empty()) {
      const auto p = row_orders::row_order(a, row_orders::parse(args->order), args->o);
      io::write_matrix(args->out, permute_rows(a, p));
    }
    const auto rep = row_orders::compare_orders(a, args->o);
    if (g.json) {
      nlohmann::json j = {{"matrix", args->file},
                          {"rows", a.rows},
                          {"nnz", a.nnz()},
                          {"warps", args->o.warps},
                          {"threads", args->o.threads},
                          {"line", args->o.line},
                          {"window", args->o.window},
                          {"candidates", row_orders::name(args->o.candidates)},
                          {"orders", nlohmann::json::array()}};
      for (const auto& r : rep)
        j["orders"].push_back({{"order", row_orders::name(r.order)},
                               {"ms", r.seconds * 1e3},
                               {"max_warp_load", r.max_warp_load},
                               {"lines_per_step", r.lines_per_step}});
      return print_json(j);
    }
    std::printf("%-11s %10s %14s %15s\n", "order", "ms", "max warp load", "lines per step");
    for (const auto& r : rep)
      std::printf("%-11s %10.2f %14lld %15lld\n", row_orders::name(r.order).c_str(),
                  r.seconds * 1e3, static_cast<long long>(r.max_warp_load),
                  static_cast<long long>(r.lines_per_step));
  });
}

}  // namespace sparsetune::cli
