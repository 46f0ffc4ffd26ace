// `sparsetune tune FILE --op spmv` (or `--op spmm --n N`): searches formats and kernels for one
// matrix and writes the winner (format binary, kernel source, host header, graph, report.json) into
// a folder.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>

#include "cli.hpp"
#include "graph/format.hpp"
#include "search/interrupt.hpp"
#include "search/progress.hpp"
#include "search/sptv_tune.hpp"
#include "search/tune.hpp"

namespace sparsetune::cli {

void add_tune_command(CLI::App& app, const GlobalOptions& g) {
  auto* cmd = app.add_subcommand("tune", "Search the fastest format and kernel for a matrix");
  auto o = std::make_shared<search::TuneOptions>();
  auto t = std::make_shared<search::SptvTuneOptions>();
  cmd->add_option("FILE", o->matrix,
                  "Matrix: .mtx, .mtx.gz or .safetensors; with --op sptv a tensor (.tns, .tns.gz, "
                  ".safetensors)")
      ->required();
  cmd->add_option("--op", o->op, "Operation")
      ->check(CLI::IsMember({"spmv", "spmm", "sptv"}))
      ->capture_default_str();
  auto* n_cols = cmd->add_option("--n", o->n,
                                 "spmm: the columns of the dense B (1 to " +
                                     std::to_string(search::kMaxSpmmN) + ")")
                     ->check(CLI::Range(std::int64_t{1}, search::kMaxSpmmN));
  cmd->add_option("--layout", o->layout,
                  "spmm: the layout of B and C the kernels take, row (row strides ldb, ldc) or "
                  "col (column-major, column strides)")
      ->check(CLI::IsMember({"row", "col"}))
      ->capture_default_str();
  auto* mode = cmd->add_option("--mode", t->mode, "sptv: the mode multiplied by v (0-based)")
                   ->check(kNonNegative);
  cmd->add_option("--slice-mode", t->slice_mode,
                  "sptv: the mode to slice along (0-based; default: the smallest other mode)")
      ->check(kNonNegative);
  cmd->add_option("--sp", t->sparsity_threshold,
                  "sptv: slices at least this dense are stored Dense (stage 1; above 0, at most "
                  "1)")
      ->check(kShare)
      ->capture_default_str();
  cmd->add_option("--model", t->model,
                  "sptv: Slice-GCN file (default: configs/models/<arch>/slice_gcn.safetensors)");
  cmd->add_option("--slice-format", t->slice_format,
                  "sptv: store every slice in this format (CSR, COO, ELL, HYB, Dense) instead of "
                  "selecting one per slice");
  auto* coo_sorted = cmd->add_flag(
      "--coo-sorted", t->coo_sorted,
      "sptv: COO slices in column-sorted thread blocks (v read in sweeps, fibers summed in shared "
      "memory) instead of atomics into y");
  cmd->add_option("--coo-block-nnz", t->coo_block_nnz,
                  "sptv: entries a column-sorted COO thread block holds at most (0: a "
                  "thousandth of the part's, 4096 to 65536)")
      ->needs(coo_sorted)
      ->capture_default_str();
  cmd->add_option(
      "--hyb-width", t->hyb_width,
      "sptv: HYB's threshold H (default: the longest fiber length a third of the HYB slices' "
      "fibers reach)");
  cmd->add_option("--batches", t->batches,
                  "sptv: parts per slice format, for kernel.h's pipelined run from host memory")
      ->capture_default_str();
  cmd->add_option("--dtype", o->dtype,
                  "Value type (f16: fp16 values and x or B, fp32 accumulation and y or C; SpMV and "
                  "SpMM)")
      ->check(CLI::IsMember({"f64", "f32", "f16"}))
      ->capture_default_str();
  cmd->add_option("-o,--out", o->out_dir, "Output folder (default: <matrix name>.tuned)");
  cmd->add_option("--budget", o->budget_s, "Search time in seconds; 0: predict only, no GPU")
      ->check(kNonNegative)
      ->capture_default_str();
  cmd->add_option("--max-candidates", o->max_candidates,
                  "Most candidates scored (0: the budget decides; 64 when predicting only)")
      ->check(kNonNegative);
  cmd->add_option("--crux-evaluations", o->crux_evaluations,
                  "SpMV with a budget: points of the crux search (tensor-core split, Bayesian "
                  "optimisation) after the graph search, in its last --crux-share; 0: none")
      ->check(kNonNegative)
      ->capture_default_str();
  cmd->add_option("--crux-share", o->crux_share,
                  "SpMV with a budget: the share of the search's time the crux search may take")
      ->check(CLI::Range(0.0, 0.9))
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed of the search's random choices")->capture_default_str();
  cmd->add_option("--db", o->db_path,
                  "Tuning database (default: $XDG_DATA_HOME/sparsetune/tuning.db)");
  cmd->add_flag("--force", o->force, "Search even when the database already has an answer");
  auto rank_by = std::make_shared<std::string>();
  cmd->add_option("--rank-by", *rank_by,
                  "SpMV and SpMM: rank measured candidates by their time after an L2 flush "
                  "(flushed: one call, the matrix read from memory) or by back-to-back calls "
                  "(warm: an iterative solver's calls, the matrix kept in L2 where it fits); the "
                  "reported time is the flushed one either way. SpTV: by the kernels' time with "
                  "the format on the GPU (device) or by Alg. 1's pipeline from host memory "
                  "(transfers)")
      ->check(CLI::IsMember({"flushed", "warm", "device", "transfers"}))
      ->default_str("flushed (sptv: device)");
  cmd->add_option("--screen-above", o->screen_above,
                  "With a GPU, search matrices of more entries on a row sample first and confirm "
                  "its best candidates on the full matrix (0: never)")
      ->capture_default_str();
  cmd->add_option("--family", o->family,
                  "Family recorded with the run for reports (SuiteSparse group, generator, ...)");
  cmd->add_option("--config-dir", o->config_dir, "Folder of space.json and pruning.json");
  cmd->add_option("--graphs-dir", o->graphs_dir,
                  "Folder of the known-format graphs seeding the search");
  cmd->add_flag("--compile-only", o->compile_only,
                "No GPU: design and compile every candidate on the full matrix, score it by the "
                "cost model (the search's CPU side, as a GPU run does it)");
  cmd->add_option("--arch", o->arch, "NVRTC target when no GPU is present (default sm_90)");
  cmd->add_option("--models-dir", o->models_dir,
                  "Folder of the learned models, by architecture (default: configs/models)");
  cmd->add_flag(
      "--cost-model", [o](std::int64_t) { o->learned = false; },
      "Rank by the analytic cost model even where a learned model exists");
  cmd->callback([o, t, cmd, mode, n_cols, rank_by, &g] {
    if (o->op == "spmm" && n_cols->count() == 0)
      throw CLI::ValidationError("--n", "--op spmm needs --n (the columns of B)");
    if (o->op != "spmm" && n_cols->count() != 0)
      throw CLI::ValidationError("--n", "--n is the columns of B: it goes with --op spmm");
    graph::check_layout(o->layout, o->op);  // row or col, col with --op spmm only
    const bool sptv_rank = *rank_by == "device" || *rank_by == "transfers";
    if (!rank_by->empty() && sptv_rank != (o->op == "sptv"))
      throw CLI::ValidationError("--rank-by", "--rank-by " + *rank_by + " does not go with --op " +
                                                  o->op +
                                                  " (spmv, spmm: flushed or warm; sptv: device or "
                                                  "transfers)");
    // Options of SpTV alone would be ignored by SpMV and SpMM: refused, by name.
    if (o->op != "sptv")
      for (const char* name : {"--mode", "--slice-mode", "--sp", "--model", "--slice-format",
                               "--coo-sorted", "--coo-block-nnz", "--hyb-width", "--batches"})
        if (cmd->count(name) != 0)
          throw CLI::ValidationError(name, std::string(name) + " goes with --op sptv");
    o->rank_warm = *rank_by == "warm";
    t->rank_transfers = *rank_by == "transfers";
    if (o->op == "sptv") {
      if (mode->count() == 0) throw CLI::ValidationError("--mode", "--op sptv needs --mode");
      t->tensor = o->matrix;
      t->dtype = o->dtype;
      t->out_dir = o->out_dir;
      t->budget_s = o->budget_s;
      t->arch = o->arch;
      return run_tune_sptv(*t, g);
    }
    search::InterruptGuard guard;
    search::ProgressBar bar(o->budget_s, !g.json);
    o->stop = &guard.flag();
    o->progress = [&bar](const search::Progress& p) { bar.update(p); };
    const auto r = search::tune(*o);
    bar.finish();
    const auto& j = r.report;
    if (g.json) return print_json(j);
    const auto& s = j["search"];
    std::vector<std::vector<std::string>> rows = {
        {"matrix", o->matrix + " (" + std::to_string(j["matrix"]["rows"].get<std::int64_t>()) +
                       " x " + std::to_string(j["matrix"]["cols"].get<std::int64_t>()) + ", " +
                       std::to_string(j["matrix"]["nnz"].get<std::int64_t>()) + " non-zeros)"},
        {"op", o->op +
                   (o->op == "spmm" ? ", B of " + std::to_string(o->n) + " columns, " + o->layout +
                                          "-major B and C"
                                    : "") +
                   ", " + o->dtype +
                   (o->dtype != "f16" ? ""
                    : o->op == "spmm" ? " (fp16 A and B, fp32 accumulation and C)"
                                      : " (fp16 A and x, fp32 accumulation and y)")},
        {"graph", j["graph_line"].get<std::string>()},
        {j["measured"].get<bool>() ? "measured" : "predicted",
         fixed(j["time_us"].get<double>(), 2) + " us, " + fixed(j["gflops"].get<double>(), 2) +
             " GFLOP/s, " + fixed(j["gbs"].get<double>(), 1) + " GB/s"},
        {"device", j["device"].get<std::string>()}};
    if (j.value("ranked_by", "flushed") == "warm" && j["warm"].is_object())
      rows.push_back({"warm", fixed(j["warm"]["median_us"].get<double>(), 2) +
                                  " us (back-to-back calls; the search ranked by this time)"});
    if (!j["measured"].get<bool>())
      rows.push_back({"note", j["measurement_note"].get<std::string>()});
    if (s.value("from_database", false)) {
      rows.push_back({"search", "answered from the tuning database (--force searches again)"});
    } else {
      rows.push_back({"search", std::to_string(s["candidates"].get<int>()) + " candidates, " +
                                    std::to_string(s["structures"].get<int>()) + " structures, " +
                                    std::to_string(s["failures"]["total"].get<int>()) +
                                    " failed, " + std::to_string(s["pruned"]["total"].get<int>()) +
                                    " pruned, " + fixed(s["seconds"].get<double>(), 1) +
                                    " s, stopped by " + s["stopped_by"].get<std::string>()});
      if (s.contains("note")) rows.push_back({"note", s["note"].get<std::string>()});
      std::string by;
      for (const auto& [k, v] : s["failures"]["by_category"].items())
        by += (by.empty() ? "" : ", ") + std::to_string(v.get<int>()) + " " + k;
      if (!by.empty()) rows.push_back({"failed", by});
      const auto& b = s["baseline_csr_vector"];
      if (b.value("gflops", 0.0) > 0)
        rows.push_back({"vs csr-vector",
                        fixed(j["gflops"].get<double>() / b["gflops"].get<double>(), 2) + "x"});
    }
    if (!j["speedup_vs_best_cusparse"].is_null())
      rows.push_back({"vs cuSPARSE", fixed(j["speedup_vs_best_cusparse"].get<double>(), 2) +
                                         "x the best verified algorithm"});
    for (const auto& f : j["files"]) rows.push_back({"wrote", f.get<std::string>()});
    print_table(rows);
  });
}

}  // namespace sparsetune::cli
