// `sparsetune collect LIST|DIR --op spmv|spmm [--n N ...]`: tunes a corpus one matrix at a time
// into the tuning database (search/collect.hpp), with a progress line and ETA on stderr. `--op
// sptv` times sampled slices of a corpus of tensors in every slice format instead: Slice-GCN's
// labels (search/slice_collect.hpp).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cli.hpp"
#include "search/collect.hpp"
#include "search/interrupt.hpp"
#include "search/row_order_collect.hpp"
#include "search/slice_collect.hpp"
#include "search/tune.hpp"

namespace sparsetune::cli {

void add_collect_command(CLI::App& app, const GlobalOptions& g) {
  auto* cmd = app.add_subcommand(
      "collect", "Measure a corpus into the tuning database, one matrix at a time (resumable)");
  struct Options {
    std::string list;
    std::string shard;  // I/N: this command's share of the list
    search::CollectOptions c;
    search::SliceTimingOptions slices;
    bool row_orders = false;
    row_orders::Candidates candidates = row_orders::Candidates::shared_lines;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("LIST", o->list,
                  "List of matrices (PATH [FAMILY], or gen KIND name=value ... seed=S), or a "
                  "folder of matrix files")
      ->required();
  cmd->add_option("--op", o->c.op, "Operation")
      ->check(CLI::IsMember({"spmv", "spmm", "sptv"}))
      ->capture_default_str();
  cmd->add_option("--n", o->c.ns,
                  "SpMM: B's column counts, each a search of its own (default: 32 and 128)")
      ->check(CLI::Range(std::int64_t{1}, search::kMaxSpmmN));
  cmd->add_flag("--row-orders", o->row_orders,
                "SpMM: time the warp-per-row kernel under each of the eleven row orders instead of "
                "tuning (the row-order predictor's labels; f32 unless --dtype)");
  add_candidates_option(*cmd, o->candidates, "--candidates", "--row-orders: ");
  cmd->add_option("--max-slices", o->slices.max_slices,
                  "SpTV: slices sampled per tensor and mode, each timed in every slice format")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  // Each kind of timing keeps its own default; the help names both from their options.
  cmd->add_option("--runs", o->slices.runs,
                  "SpTV and --row-orders: timed runs per slice and format (default " +
                      std::to_string(o->slices.runs) + "), or per order (default " +
                      std::to_string(search::RowOrderTimingOptions{}.runs) + ")")
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--dtype", o->c.dtype, "Value type (SpTV: f32 unless given)")
      ->check(CLI::IsMember({"f64", "f32"}))
      ->capture_default_str();
  cmd->add_option("--budget", o->c.budget_s, "tune's search budget per matrix, seconds")
      ->check(kPositive)
      ->capture_default_str();
  cmd->add_option("--crux-share", o->c.crux_share,
                  "SpMV: the share of each search's time its crux search may take (tune's "
                  "--crux-share; default: tune's)")
      ->check(CLI::Range(0.0, 0.9));
  cmd->add_flag("--grow-budget", o->c.grow_budget,
                "A matrix whose search --budget leaves no time is tuned once more with the budget "
                "tune asks for (within --per-matrix-timeout when given)");
  cmd->add_option("--per-matrix-timeout", o->c.per_matrix_timeout_s,
                  "Hard limit per matrix, seconds (default 3 x budget + 60)")
      ->check(kNonNegative);
  cmd->add_option("--db", o->c.db_path,
                  "Tuning database (default: $XDG_DATA_HOME/sparsetune/tuning.db)");
  cmd->add_option("--gen-dir", o->c.gen_dir,
                  "Folder of the generated matrices (default: beside the database, generated/)");
  cmd->add_option("--work-dir", o->c.work_dir,
                  "Keep each matrix's tune output and log here (default: a temporary folder)");
  cmd->add_option("--shard", o->shard,
                  "Collect every N-th matrix of the list from the I-th (I/N, 0 <= I < N): N "
                  "commands, one per GPU, share a list (scripts/collect-gpus.sh)");
  cmd->add_flag(
      "--compile-only", o->c.compile_only,
      "No GPU: tune --compile-only per matrix (the search's CPU side, cost-model scores)");
  cmd->callback([o, cmd, &g] {
    search::InterruptGuard guard;
    o->c.stop = &guard.flag();
    const bool sptv = o->c.op == "sptv";
    if (cmd->count("--n") && o->c.op != "spmm")
      throw Error("collect --n sets B's columns of SpMM; add --op spmm");
    if (sptv && o->c.compile_only)
      throw Error("collect --op sptv times slices on a GPU; --compile-only is for spmv and spmm");
    auto items = sptv ? search::read_tensor_list(o->list) : search::read_collect_list(o->list);
    if (!o->shard.empty()) items = search::shard_of(std::move(items), o->shard);
    const bool tty = isatty(2);
    o->c.progress = [tty](const search::CollectProgress& p) {
      const auto line = search::render_progress(p, 110);
      std::fprintf(stderr, tty ? "\r\033[K%s" : "%s\n", line.c_str());
      std::fflush(stderr);
    };
    if (o->row_orders && o->c.op != "spmm")
      throw Error("collect --row-orders times SpMM; add --op spmm");
    if (!o->row_orders && cmd->count("--candidates"))
      throw Error("collect: --candidates applies to --row-orders only");
    search::CollectSummary s;
    if (o->row_orders) {
      if (o->c.compile_only)
        throw Error("collect --row-orders times the orders on a GPU; --compile-only does not");
      search::RowOrderCollectOptions ro;
      ro.db_path = o->c.db_path;
      ro.gen_dir = o->c.gen_dir;
      ro.timing.dtype = cmd->count("--dtype") ? o->c.dtype : "f32";
      if (cmd->count("--runs")) ro.timing.runs = o->slices.runs;
      ro.timing.candidates = o->candidates;
      if (!o->c.ns.empty()) ro.timing.n.assign(o->c.ns.begin(), o->c.ns.end());
      ro.stop = o->c.stop;
      ro.progress = o->c.progress;
      s = search::collect_row_orders_db(items, ro);
    } else if (sptv) {
      search::SliceCollectOptions so;
      so.db_path = o->c.db_path;
      so.timing = o->slices;
      so.timing.dtype = cmd->count("--dtype") ? o->c.dtype : "f32";
      so.stop = o->c.stop;
      so.progress = o->c.progress;
      s = search::collect_slices(items, so);
    } else {
      s = search::collect(items, o->c);
    }
    if (tty) std::fprintf(stderr, "\r\033[K");
    if (g.json) {
      print_json(s.to_json());
    } else {
      std::vector<std::vector<std::string>> rows = {{"matrix", "status", "seconds", "reason"}};
      for (const auto& i : s.items)
        rows.push_back({i.name, i.status, fixed(i.seconds, 1), i.reason});
      print_table(rows);
      std::printf("\n%s: %d done, %d skipped (done before), %d failed in %.0f s%s\n",
                  s.device.c_str(), s.done, s.skipped, s.failed, s.seconds,
                  s.interrupted ? " (interrupted: the same command resumes)" : "");
    }
    // Exit status: 130 interrupted, 1 some matrix failed (each one's reason is above).
    std::fflush(stdout);
    if (s.interrupted) std::exit(130);
    if (s.failed > 0) std::exit(1);
  });
}

}  // namespace sparsetune::cli
