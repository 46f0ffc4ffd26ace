#include "search/tune.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>

#include "codegen/emit.hpp"
#include "core/error.hpp"
#include "core/fingerprint.hpp"
#include "core/operand_checks.hpp"
#include "core/reference.hpp"
#include "core/version.hpp"
#include "db/tuning_db.hpp"
#include "features/feature.hpp"
#include "features/matrix_features.hpp"
#include "graph/crux_graph.hpp"
#include "graph/interpreter.hpp"
#include "io/matrix_file.hpp"
#include "runtime/bench.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/nvrtc.hpp"
#include "runtime/stats.hpp"
#include "search/bench_record.hpp"
#include "search/compile_only_evaluator.hpp"
#include "search/crux_search.hpp"
#include "search/crux_seeds.hpp"
#include "search/gpu_evaluator.hpp"
#include "search/learned_evaluator.hpp"
#include "search/liteform_seeds.hpp"
#include "search/row_order_pick.hpp"
#include "search/row_sample.hpp"
#include "search/screen.hpp"
#include "search/space.hpp"
#include "search/spmm_seeds.hpp"
#include "search/wall_budget.hpp"

namespace sparsetune::search {

namespace {

using nlohmann::json;

// A deterministic x with no zeros and both signs (never an all-zero input).
std::vector<double> check_vector(std::int64_t n) {
  std::vector<double> x(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    x[i] = (1.0 + static_cast<double>((i * 37) % 19) / 19.0) * (i % 3 == 1 ? -1.0 : 1.0);
  return x;
}

// A tuning-database row of this matrix, operation and device, its result still to fill in.
db::Measurement row_of(const std::string& fp, const TuneOptions& o, const Evaluator& eval) {
  db::Measurement m;
  m.fingerprint = fp;
  m.op = o.op;
  m.n = o.n;
  m.dtype = o.dtype;
  m.device = eval.device();
  m.arch = eval.arch();
  m.tool_version = kVersion;
  return m;
}

// The tuning-database row of one scored candidate.
// An evaluation's flushed median and its rates: the time the database and report.json hold,
// whatever the search ranked by (a warm-ranked evaluation's rates rescaled to it).
struct Flushed {
  double us = 0, gflops = 0, gbs = 0;
};
Flushed flushed_of(const Evaluation& e) {
  const double us = e.flushed_us > 0 ? e.flushed_us : e.time_us;
  const double k = us > 0 && e.time_us > 0 ? e.time_us / us : 1.0;
  return {us, e.gflops * k, e.gbs * k};
}

db::Measurement measurement_of(const Scored& h, const std::string& fp, const TuneOptions& o,
                               const Evaluator& eval) {
  db::Measurement m = row_of(fp, o, eval);
  m.candidate = "graph/" + graph_hash(h.candidate.graph);
  m.graph = graph::graph_to_json(h.candidate.graph).dump();
  json params = {{"point", h.candidate.point},
                 {"origin", h.candidate.origin},
                 {"level", h.candidate.level},
                 {"structure", h.candidate.structure},
                 {"predicted", !h.evaluation.measured}};
  // The cost model's time beside the measured one: the report's predicted-vs-measured plot.
  if (h.candidate.predicted_us > 0 && h.evaluation.measured)
    params["predicted_us"] = h.candidate.predicted_us;
  if (h.candidate.learned_us > 0 && h.evaluation.measured)
    params["learned_us"] = h.candidate.learned_us;
  m.params = params.dump();
  const Flushed t = flushed_of(h.evaluation);
  m.time_us = t.us;
  m.gflops = t.gflops;
  m.gbps = t.gbs;
  m.error = h.evaluation.error;
  m.ok = h.evaluation.ok;
  m.failure = h.evaluation.ok ? std::string() : h.evaluation.category + ": " + h.evaluation.failure;
  return m;
}

json candidate_json(const Scored& s) {
  const auto& e = s.evaluation;
  json j = {{"graph", graph::describe(s.candidate.graph)},
            {"origin", s.candidate.origin},
            {"level", s.candidate.level},
            {"ok", e.ok},
            {"measured", e.measured},
            {"time_us", e.time_us},
            {"gflops", e.gflops}};
  if (!e.ok) j["failure"] = e.failure;
  return j;
}

struct Checked {
  codegen::Emitted emitted;
  double build_ms = 0;  // designing the format from CSR: what a user pays once per matrix
  double cpu_error = 0, tolerance = 0;
  std::string kernel_log;
};

// SpMM's CPU check: C = A·B on the first two columns of a deterministic B. The format's arrays
// are the same for every column of B (column tiles and lanes exist only in the generated
// kernel, which the GPU verifies on all of them), and the interpreter walks the format once per
// column: two check the design and the B and C indexing, where a tile's worth of columns cost
// 100 s on a 7.7M-entry matrix.
double spmm_cpu_error(const graph::Format& f, const Csr64& a, std::int64_t n) {
  const std::int64_t cols = std::min<std::int64_t>(n, 2);
  const auto x = check_vector(a.cols * cols);
  if (!f.col_major())
    return relative_l2_error(graph::interpret_spmm(f, x, cols), spmm_reference(a, x, cols));
  // Column-major: the interpreter reads x as B column by column; the reference takes it row-major.
  std::vector<double> b(x.size()), c_ref(static_cast<std::size_t>(a.rows * cols));
  for (std::int64_t i = 0; i < a.cols; ++i)
    for (std::int64_t j = 0; j < cols; ++j) b[i * cols + j] = x[i + j * a.cols];
  const auto r = spmm_reference(a, b, cols);
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) c_ref[i + j * a.rows] = r[i * cols + j];
  return relative_l2_error(graph::interpret_spmm(f, x, cols), c_ref);
}

// Designs, checks on the CPU and compiles one graph; throws Error when any step fails.
Checked check_and_compile(const graph::Graph& g, const Csr64& a, const std::string& dtype,
                          const std::string& arch, std::int64_t n,
                          const std::string& layout = "row") {
  Checked c;
  codegen::EmitOptions opt;
  opt.design.dtype = dtype;
  opt.layout = layout;
  const auto t0 = std::chrono::steady_clock::now();
  c.emitted = codegen::generate(g, a, opt);
  c.build_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (c.emitted.format.op == "spmm") {
    c.cpu_error = spmm_cpu_error(c.emitted.format, a, n);
  } else {
    const auto x = check_vector(a.cols);
    const auto y = graph::interpret(c.emitted.format, x);
    c.cpu_error = relative_l2_error(y, spmv_reference(a, x));
  }
  std::int64_t max_len = 1;
  for (std::int64_t r = 0; r < a.rows; ++r)
    max_len = std::max<std::int64_t>(max_len, a.row_ptr[r + 1] - a.row_ptr[r]);
  c.tolerance = runtime::error_tolerance(runtime::parse_dtype(dtype), max_len);
  if (!(c.cpu_error <= c.tolerance))
    throw Error("CPU check failed: relative error " + std::to_string(c.cpu_error) + " > " +
                std::to_string(c.tolerance));
  runtime::CompileOptions co;
  co.arch = arch;
  const runtime::KernelCache cache;
  c.kernel_log = runtime::compile({"tuned", c.emitted.kernels.source}, co, &cache).log;
  return c;
}

std::string name_of(const std::string& path) {
  std::string n = std::filesystem::path(path).filename().string();
  for (const char* ext : {".gz", ".mtx", ".safetensors"})
    if (n.size() > std::string(ext).size() && n.ends_with(ext))
      n.resize(n.size() - std::string(ext).size());
  return n;
}

}  // namespace

std::string matrix_name(const std::string& path) { return name_of(path); }

std::string default_out_dir(const std::string& matrix) { return name_of(matrix) + ".tuned"; }

TuneOutcome tune(const TuneOptions& o) {
  if (o.op != "spmv" && o.op != "spmm")
    throw Error("tune: --op must be spmv or spmm here (got '" + o.op + "')");
  if (o.op == "spmm" && (o.n < 1 || o.n > kMaxSpmmN))
    throw Error("tune --op spmm: --n must be 1 to " + std::to_string(kMaxSpmmN) + " (got " +
                std::to_string(o.n) + ")");
  if (o.op == "spmv" && o.n != 1)
    throw Error("tune: --n is the columns of B, for --op spmm only (got --op spmv and --n " +
                std::to_string(o.n) + ")");
  if (o.layout != "row" && o.layout != "col")
    throw Error("tune: --layout must be row or col (got '" + o.layout + "')");
  if (o.layout != "row" && o.op != "spmm")
    throw Error("tune: --layout is the layout of B and C, for --op spmm only (got --op " + o.op +
                " and --layout " + o.layout + ")");
  const bool spmm = o.op == "spmm";
  const std::int64_t spmm_n = spmm ? o.n : 0;  // 0: the evaluators' SpMV
  if (o.dtype != "f64" && o.dtype != "f32" && o.dtype != "f16")
    throw Error("tune: --dtype must be f64, f32 or f16 (got '" + o.dtype + "')");
  if (o.budget_s < 0) throw Error("tune: --budget must be 0 or more seconds");
  if (o.max_candidates < 0) throw Error("tune: --max-candidates must be 0 or more");
  // The budget covers the whole command as its user sees it: the clock starts now.
  WallBudget wall(o.budget_s);

  const Csr64 a = io::read_matrix(o.matrix);
  if (a.nnz() == 0) throw Error(o.matrix + ": the matrix has no non-zeros; nothing to tune");
  // Values the kernels would store as inf, and vectors this machine cannot hold, are refused
  // before any search (fp16 kernels store A, x and B in fp16 and accumulate in fp32).
  check_values_fit(a.val, o.dtype, o.matrix);
  check_dense_operands(static_cast<double>(a.rows), static_cast<double>(a.cols),
                       static_cast<double>(std::max<std::int64_t>(spmm_n, 1)), o.dtype, o.matrix);
  const auto feats = features::matrix_features(a);
  const auto alpha = features::select_group(feats, features::kAlphaSparse);
  const std::string fp = fingerprint(a);
  TuneOutcome out;
  out.out_dir = o.out_dir.empty() ? default_out_dir(o.matrix) : o.out_dir;
  io::StagedFolder::check_target(out.out_dir);  // before a search whose outputs it would refuse
  const std::string config_dir = o.config_dir.empty() ? default_search_config_dir() : o.config_dir;
  const std::string graphs_dir = o.graphs_dir.empty() ? default_graphs_dir() : o.graphs_dir;

  // Configuration first: a bad file is reported before any work is done.
  const auto space = load_search_space(config_dir + "/space.json");
  const auto pruning = load_pruning(config_dir + "/pruning.json");
  // The known formats; for SpMM each with its column tile (the op is a dimension of the graphs).
  auto seeds = load_graphs(graphs_dir);
  // A known format built of an operator the ban list names is not proposed either: the search
  // starts from what it may grow.
  std::erase_if(seeds, [&](const graph::Graph& g) {
    const auto names = operator_names(g);
    return std::find_first_of(names.begin(), names.end(), pruning.ban.begin(), pruning.ban.end()) !=
           names.end();
  });
  auto baseline = graph::read_graph(graphs_dir + "/csr-vector.json");
  graph::Graph row_kernel;  // SpMM: the warp-per-row graph the row orders apply to
  if (spmm) {
    const auto longest = static_cast<std::int64_t>(features::feature_value(alpha, "row_nnz_max"));
    auto made = spmm_seeds(seeds, baseline, a, o.n, longest);
    seeds = std::move(made.seeds);
    baseline = std::move(made.baseline);
    row_kernel = std::move(made.row_kernel);
  }

  // Who scores candidates: the GPU through a worker, else a predictor (below).
  std::string no_gpu;
  std::unique_ptr<GpuEvaluator> gpu;
  if (o.compile_only)
    no_gpu =
        "--compile-only: designed and compiled on the full matrix, predicted by the cost model";
  else if (o.budget_s == 0)
    no_gpu = "--budget 0: predicted only";
  else if (!o.use_gpu)
    no_gpu = "GPU use disabled: predicted only";
  else {
    gpu = std::make_unique<GpuEvaluator>(a, o.dtype, o.launch, 120, 20, spmm_n);
    gpu->rank_warm(o.rank_warm);
    std::string why;
    if (!gpu->open(&why)) {
      no_gpu = why + ": predicted only";
      gpu.reset();
    }
  }
  CostModelEvaluator model(a, o.dtype, {}, o.n);
  const std::string arch = gpu ? gpu->arch() : (o.arch.empty() ? "sm_90" : o.arch);
  runtime::check_arch(arch);
  json row_order_json;  // SpMM: the warp-per-row seed under the predicted order is tried first
  if (spmm)
    row_order_json =
        place_row_order_seed(seeds, row_kernel, a, o.n, o.learned, o.models_dir, arch).to_json();
  if (gpu && o.edit_source) gpu->edit_sources(o.edit_source);
  std::unique_ptr<CompileOnlyEvaluator> compile_only;
  if (o.compile_only)
    compile_only = std::make_unique<CompileOnlyEvaluator>(a, o.dtype, arch, o.edit_source, spmm_n);
  const json feature_row = features::feature_row(feats);  // as the database stores them
  const std::string models_dir = o.models_dir.empty() ? default_models_dir() : o.models_dir;
  CruxSeeds crux_model;  // SpMV: the crux model's point, as seeds and the crux search's first
  if (!spmm) {
    crux_model = crux_seeds(feature_row, o.dtype, o.learned, models_dir, arch);
    for (auto& g : crux_model.graphs) seeds.push_back(std::move(g));
  }
  json cell_pick = json::object();
  int pinned_after_order = 0;  // SpMM seeds scored in order right after the row-order seed
  if (spmm) {
    pinned_after_order = place_liteform_seeds(seeds, a, o.n, feature_row, o.learned, models_dir,
                                              arch, gpu != nullptr, o.budget_s == 0, cell_pick);
    // A measuring search scores the warp per run of non-zeros right after the row-order seed:
    // it was the fastest measured graph at n >= 64 on most shared matrices (H200, 2026-11-26),
    // where the rankings, trained before it existed, put it ninth and a small budget ended first.
    const auto split = std::find_if(seeds.begin(), seeds.end(), [](const graph::Graph& g) {
      return g.name == "nnz-split-warp";
    });
    if (gpu && split != seeds.end() && split != seeds.begin()) {
      std::rotate(seeds.begin() + 1, split, split + 1);
      ++pinned_after_order;  // ahead of CELL
    }
  }
  // The learned ranking of this architecture, when one is shipped and current: it scores a
  // predict-only search and orders a measuring search's seeds. Else the cost model does both.
  // SpMV reads spmv-rank, SpMM spmm-rank (the same regression with log2(n) among its inputs).
  std::optional<models::SpmvRanker> ranker;
  if (o.learned)
    ranker =
        load_spmv_ranker(o.models_dir, arch, spmm ? models::kSpmmRankName : models::kSpmvRankName);
  std::string ranking_note;  // why a current model does not rank this matrix
  if (ranker) {
    ranking_note = ranker->outside_training(a.nnz());
    if (!ranking_note.empty()) {
      spdlog::info("{}: candidates are ranked by the cost model", ranking_note);
      ranker.reset();
    }
  }
  std::unique_ptr<LearnedEvaluator> learned;
  // A predict-only search needs only the Designer's verdict on each candidate (on a sample);
  // a measuring one also records the cost model's prediction beside each measurement.
  const bool predict_only = !gpu && !compile_only;
  if (ranker)
    learned = std::make_unique<LearnedEvaluator>(
        predict_only ? nullptr : &model, *ranker,
        models::MatrixInputs{feature_row, o.dtype, a.rows, a.cols, a.nnz(), spmm ? o.n : 0}, a);
  Evaluator& predictor = learned ? static_cast<Evaluator&>(*learned) : model;
  const std::string ranked_by =
      learned ? "the learned " + ranker->file().model + " model (" + arch + ")" : "the cost model";
  Evaluator& eval = gpu            ? static_cast<Evaluator&>(*gpu)
                    : compile_only ? static_cast<Evaluator&>(*compile_only)
                                   : predictor;

  db::TuningDb db(o.db_path.empty() ? db::TuningDb::default_path() : o.db_path);
  db.put_matrix({fp, name_of(o.matrix), a.rows, a.cols, a.nnz(), feature_row.dump()});

  std::vector<Scored> ranked;  // candidates to emit, best first
  bool starved = false;        // the budget left the search no time
  json search_json;
  bool from_db = false;
  std::optional<db::Measurement> cached;
  // The database answers once a search of this matrix finished on this device: a killed tune's
  // measurements alone are not an answer (they are kept, and the new search adds to them).
  if (!o.force && !(gpu && o.rank_warm) && db.last_search(fp, o.op, o.dtype, o.n, eval.device()))
    cached = db.best(fp, o.op, o.dtype, o.n, eval.device());
  if (cached) {
    from_db = true;
    Scored s;
    s.candidate.graph = graph::graph_from_json(json::parse(cached->graph), "tuning database");
    graph::validate(s.candidate.graph, "tuning database");
    s.candidate.origin = "database";
    s.evaluation.ok = true;
    s.evaluation.measured = eval.measures();
    s.evaluation.time_us = cached->time_us;
    s.evaluation.gflops = cached->gflops;
    s.evaluation.gbs = cached->gbps;
    s.evaluation.error = cached->error;
    ranked.push_back(s);
    search_json = {{"from_database", true}, {"database", db.path()}};
  } else {
    SearchOptions so;
    so.budget_s = wall.plan_search(final_steps_estimate(a.rows, a.nnz(), gpu != nullptr));
    so.max_candidates = o.max_candidates > 0 ? o.max_candidates : (o.budget_s == 0 ? 64 : 0);
    so.seed = o.seed;
    so.dtype = o.dtype;
    so.spmm_n = o.n;
    so.predictor = &predictor;
    // The warp-per-row seed under the predicted row order, the warp per run of non-zeros, then
    // CELL where it is predicted.
    so.pinned_seeds = spmm ? 1 + pinned_after_order : 0;
    so.stop = o.stop;
    so.progress = o.progress;
    // Every candidate is committed as it is scored (one transaction each): a killed tune keeps
    // what it measured.
    so.on_scored = [&](const Scored& h) { db.add(measurement_of(h, fp, o, eval)); };
    const auto prune = prune_for(pruning, alpha, o.op);
    // A large matrix with a GPU is searched on a row sample and the best candidates found there
    // are measured on the full matrix (search/screen.hpp).
    std::unique_ptr<GpuEvaluator> sample_gpu;
    RowSample sample;
    if (gpu && o.screen_above > 0 && a.nnz() > o.screen_above) {
      sample = sample_rows(a, o.screen_sample);
      // 10 timed runs: the sample only ranks candidates for the full matrix's 20.
      sample_gpu =
          std::make_unique<GpuEvaluator>(sample.matrix, o.dtype, o.launch, 120, 10, spmm_n);
      sample_gpu->rank_warm(o.rank_warm);
      if (o.edit_source) sample_gpu->edit_sources(o.edit_source);
      std::string why;
      if (!sample_gpu->open(&why)) sample_gpu.reset();
    }
    SearchResult r;
    json screen_json, crux_json;
    if (sample_gpu) {
      ScreenResult sr =
          screen_then_confirm(sample.matrix, space, prune, seeds, baseline, *sample_gpu, eval, so);
      r = std::move(sr.sample);
      r.history = sr.confirmed;
      r.baseline = sr.confirmed.front();
      screen_json = {{"sample_rows", sample.matrix.rows},
                     {"sample_nnz", sample.matrix.nnz()},
                     {"sample_candidates", r.stats.candidates},
                     {"sample_structures", r.stats.structures},
                     {"sample_seconds", sr.sample_s},
                     {"confirmed_candidates", sr.confirmed.size()},
                     {"confirm_seconds", sr.confirm_s},
                     {"sample_stage_seconds", sample_gpu->stage_seconds()}};
    } else {
      // MatXtract's crux search takes the last crux_share (a fifth) of the search's time: Bayesian
      // optimisation of the tensor-core split, scored by the same evaluator and recorded alike.
      const bool crux = o.op == "spmv" && o.budget_s > 0 && o.crux_evaluations > 0;
      const auto deadline =
          std::chrono::steady_clock::now() + std::chrono::duration<double>(so.budget_s);
      if (crux) so.budget_s *= 1.0 - std::clamp(o.crux_share, 0.0, 0.9);
      r = run_search(a, space, prune, seeds, baseline, eval, so);
      // An explicit --max-candidates counts the crux points too.
      const int room =
          o.max_candidates > 0 ? o.max_candidates - r.stats.candidates : o.crux_evaluations;
      if (crux && room > 0 && r.stats.stopped_by != "interrupted") {
        CruxSearchOptions co;
        co.bo.max_evaluations = std::min(o.crux_evaluations, room);
        co.bo.initial = std::min(co.bo.initial, std::max(2, co.bo.max_evaluations));
        co.bo.seed = o.seed;
        if (crux_model.first)
          co.bo.first = {*crux_model.first};  // the search starts from the prediction
        co.width = o.dtype == "f16" ? 8 : 4;  // m16n8k8 for fp16 values, m8n8k4 in fp64 else
        // The cold part is the search's fastest CUDA-core graph (CSR-vector when none ran), so
        // the all-cold point is that graph and a hot part must beat the best found without it.
        co.cold = fastest_cuda_core_ops(r.history);
        co.bo.stop = [&] {
          return std::chrono::steady_clock::now() >= deadline || (o.stop && o.stop->load());
        };
        const auto cr = search_crux(eval, co);
        for (std::size_t i = 0; i < cr.evaluations.size(); ++i) {
          Scored h{cr.candidates[i], cr.evaluations[i]};
          so.on_scored(h);
          r.history.push_back(std::move(h));
        }
        const bool best_owns =
            !cr.best.ops.empty() && cr.best.ops[0].params.value("own_rows", 0) == 1;
        crux_json = {{"points", cr.bo.tried.size()},
                     {"evaluations", cr.evaluations.size()},
                     {"failed", cr.bo.failed},
                     {"best_tau_c", cr.bo.best.tau_c},
                     {"best_tau_r", cr.bo.best.tau_r},
                     {"best_own_rows", best_owns},
                     {"best_us", cr.bo.best_value > 0 ? json(cr.bo.best_value) : json(nullptr)},
                     {"cold", graph::describe(graph::Graph{"cold", "spmv", cr.cold})}};
        if (!cr.cold_note.empty()) crux_json["cold_note"] = cr.cold_note;
      }
    }
    for (const auto& h : r.history)
      if (h.evaluation.ok) ranked.push_back(h);
    std::stable_sort(ranked.begin(), ranked.end(), [](const Scored& x, const Scored& y) {
      return x.evaluation.gflops > y.evaluation.gflops;
    });
    search_json = r.stats.to_json();
    search_json["from_database"] = false;
    search_json["ranked_by"] = ranked_by;
    if (!ranking_note.empty()) search_json["ranked_by_note"] = ranking_note;
    if (!crux_json.is_null()) {
      search_json["crux"] = crux_json;
      search_json["candidates"] =
          search_json.value("candidates", 0) + crux_json["evaluations"].get<int>();
    }
    if (!screen_json.is_null()) {
      // Candidates and structures count the sample's search plus the full matrix's measurements.
      search_json["screened_on_sample"] = screen_json;
      search_json["candidates"] = r.stats.candidates + static_cast<int>(r.history.size());
    }
    starved = o.budget_s > 0 && so.budget_s < 1.0;
    if (starved) {
      // Nothing but CSR-vector could be scored: say which budget would let the search run.
      const double needed = std::ceil(wall.budget_for_search(10.0));
      char text[320];
      std::snprintf(text, sizeof text,
                    "--budget %g s leaves the search no time on this matrix (the final steps%s "
                    "need about %.0f s): only CSR-vector was scored, and the database will not "
                    "answer with it; give --budget %.0f or more for a search",
                    o.budget_s, gpu ? " and the cuSPARSE baselines" : "", wall.reserved(), needed);
      search_json["note"] = text;
      search_json["budget_needed_s"] = needed;
    } else if (r.stats.stopped_by == "budget") {
      search_json["note"] =
          "stopped early to finish within --budget: the time left was reserved for the final "
          "check, compile and files" +
          std::string(gpu ? " and the cuSPARSE baselines" : "");
    }
    search_json["stage_seconds"] = eval.stage_seconds();
    search_json["baseline_csr_vector"] = candidate_json(r.baseline);
    json top = json::array();
    for (std::size_t i = 0; i < ranked.size() && i < 5; ++i)
      top.push_back(candidate_json(ranked[i]));
    search_json["top"] = top;
  }

  // The best candidate that passes the CPU check and compiles; the rest are skipped with a note.
  std::optional<Checked> chosen;
  const Scored* best = nullptr;
  json skipped = json::array();
  // The graph emitted is the best's; a crux without a hot part is emitted as its cold branch (the
  // same kernel, named for what runs).
  graph::Graph g;
  for (const auto& s : ranked) {
    try {
      g = graph::without_empty_crux(s.candidate.graph);
      chosen = check_and_compile(g, a, o.dtype, arch, o.n, o.layout);
      best = &s;
      break;
    } catch (const Error& e) {
      skipped.push_back({{"graph", graph::describe(s.candidate.graph)}, {"reason", e.what()}});
    }
  }
  if (!chosen)
    throw Error("tune: no candidate passed the CPU check and compiled" +
                std::string(from_db ? " (the database's answer: retry with --force)" : "") +
                (skipped.empty() ? std::string()
                                 : "; the first: " + skipped[0]["reason"].get<std::string>()));

  g.name = "tuned-" + name_of(o.matrix);
  // The outputs are staged and put in place together with report.json at the end: a killed tune
  // leaves the previous outputs whole.
  io::StagedFolder staged(out.out_dir, io::StagedFolder::Outputs::one_run);
  codegen::stage_emitted(chosen->emitted, g, staged);
  out.files = staged.files();
  out.files.push_back((std::filesystem::path(out.out_dir) / "report.json").string());

  // cuSPARSE, measured alongside when a GPU is there.
  json cusparse = nullptr;
  double cusparse_best = 0, cusparse_best_warm = 0, bandwidth = 0, baseline_us = 0;
  double baseline_warm_us = 0;   // the fastest verified cuSPARSE algorithm's warm median
  std::string fastest_cusparse;  // the fastest verified algorithm's candidate id
  if (gpu && !from_db) {
    try {
      runtime::BenchOptions bo;
      bo.op = o.op;
      bo.n = {o.n};
      bo.dtype = runtime::parse_dtype(o.dtype);
      bo.launch = o.launch;
      const auto rep = runtime::bench_matrix(a, bo);
      bandwidth = rep.device.bandwidth_gbs;
      cusparse = runtime::to_json(rep)["results"];
      cusparse_best = runtime::best_verified_gflops(rep.results, false);
      cusparse_best_warm = runtime::best_verified_gflops(rep.results, true);
      for (const auto& b : rep.results)
        if (b.status == "ok" && b.verified && b.warm.measured && b.warm.median_us > 0 &&
            (baseline_warm_us == 0 || b.warm.median_us < baseline_warm_us))
          baseline_warm_us = b.warm.median_us;
      // Keyed as the search's rows are, so the database and reports set them side by side.
      for (auto m : baseline_rows(rep, fp, kVersion)) {
        m.device = eval.device();
        m.arch = eval.arch();
        m.dtype = o.dtype;
        db.add(m);
        if (m.ok && m.gflops > 0 && (fastest_cusparse.empty() || m.time_us < baseline_us)) {
          fastest_cusparse = m.candidate;
          baseline_us = m.time_us;
        }
      }
    } catch (const Error& e) {
      cusparse = {{"error", e.what()}};
    }
  }

  const auto& e = best->evaluation;
  const bool measured = e.measured;
  // The winner's warm time (runtime/timing.hpp), its rates on the flushed ones' byte count.
  runtime::WarmResult warm;
  if (measured && e.detail.contains("warm")) warm = runtime::warm_from_json(e.detail["warm"], 0.0);
  if (warm.measured && warm.median_us > 0) {
    const double k = e.time_us / warm.median_us;
    warm.gflops = e.gflops * k;
    warm.gbs = e.gbs * k;
    warm.bandwidth_fraction = bandwidth > 0 ? warm.gbs / bandwidth : 0.0;
  } else {
    warm = {};
  }
  // The flushed time and its rates, whatever the search ranked by.
  const auto [flushed_us, gflops, gbs] = flushed_of(e);
  json f = json::object();
  for (const auto& x : feats) f[x.group][x.name] = x.value;
  // Building the format pays for itself after this many calls saved against the fastest cuSPARSE
  // algorithm (flushed times); null when nothing was measured or cuSPARSE is as fast.
  json build = {{"ms", chosen->build_ms},
                {"what",
                 "the format designed from CSR on the host, one thread, once per matrix "
                 "(kernel compile not included)"}};
  if (measured && baseline_us > flushed_us && flushed_us > 0)
    build["break_even_calls"] = std::ceil(chosen->build_ms * 1e3 / (baseline_us - flushed_us));
  else
    build["break_even_calls"] = nullptr;
  // The same against the fastest cuSPARSE algorithm's warm median: back-to-back calls.
  if (warm.measured && baseline_warm_us > warm.median_us)
    build["break_even_calls_warm"] =
        std::ceil(chosen->build_ms * 1e3 / (baseline_warm_us - warm.median_us));
  else
    build["break_even_calls_warm"] = nullptr;
  json report = {
      {"tool_version", kVersion},
      {"matrix",
       {{"path", o.matrix},
        {"rows", a.rows},
        {"cols", a.cols},
        {"nnz", a.nnz()},
        {"fingerprint", fp}}},
      {"op", o.op},
      {"n", o.n},
      {"dtype", o.dtype},
      {"measured", measured},
      {"measurement_note",
       measured
           ? "timed on the GPU: median of runs each after an L2 flush (\"warm\": back-to-back "
             "runs, no flush)"
           : (no_gpu.empty() ? (gpu ? gpu->note() : std::string()) : no_gpu) +
                 "; nothing was measured: times are " +
                 (compile_only || !learned ? std::string("the cost model's") : ranked_by + "'s") +
                 " predictions"},
      {"device", eval.device()},
      {"arch", arch},
      {"features", f},
      {"graph", graph::graph_to_json(g)},
      {"graph_line", graph::describe(g)},
      {"ranked_by", !measured                  ? "predicted"
                    : gpu && gpu->ranks_warm() ? "warm"
                                               : "flushed"},
      {"time_us", flushed_us},
      {"gflops", gflops},
      {"gbs", gbs},
      {"bandwidth_fraction", measured && bandwidth > 0 ? json(gbs / bandwidth) : json(nullptr)},
      {"error", measured ? json(e.error) : json(nullptr)},
      {"cpu_check", {{"error", chosen->cpu_error}, {"tolerance", chosen->tolerance}}},
      {"format_bytes", graph::stored_bytes(chosen->emitted.format)},
      {"format_build", build},
      {"cusparse", cusparse},
      {"warm", runtime::to_json(warm)},
      {"speedup_vs_best_cusparse",
       measured && cusparse_best > 0 ? json(gflops / cusparse_best) : json(nullptr)},
      {"speedup_vs_best_cusparse_warm", warm.measured && cusparse_best_warm > 0
                                            ? json(warm.gflops / cusparse_best_warm)
                                            : json(nullptr)},
      {"search", search_json},
      {"row_order", row_order_json},
      {"crux_pick", crux_model.pick},
      {"cell_pick", cell_pick},
      {"wall_budget", wall.to_json()},
      {"skipped", skipped},
      {"files", out.files}};
  if (spmm) report["layout"] = o.layout;  // B's and C's, as the emitted kernels take them
  staged.add("report.json", report.dump(2) + "\n");
  staged.commit();

  // The run is recorded once its outputs are in place: a matrix with a run is done.
  db::Run run;
  run.fingerprint = fp;
  run.op = o.op;
  run.n = o.n;
  run.dtype = o.dtype;
  run.device = eval.device();
  run.arch = arch;
  run.tool_version = kVersion;
  run.family = o.family;
  run.winner = "graph/" + graph_hash(best->candidate.graph);
  run.winner_us = flushed_us;
  run.baseline = fastest_cusparse;
  run.baseline_us = baseline_us;
  run.peak_gbs = bandwidth;
  run.search_s = search_json.value("seconds", 0.0);
  run.wall_s = wall.elapsed();
  run.candidates = search_json.value("candidates", 0);
  run.structures = search_json.value("structures", 0);
  run.failures = search_json.contains("failures") ? search_json["failures"].value("total", 0) : 0;
  run.from_database = from_db;
  // A search that had no time is not a completed one: the next tune of the matrix searches.
  if (!starved) db.add_run(run);
  out.report = std::move(report);
  return out;
}

}  // namespace sparsetune::search
