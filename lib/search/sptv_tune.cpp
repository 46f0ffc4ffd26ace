#include "search/sptv_tune.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "codegen/emit.hpp"
#include "codegen/launch_plan.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "core/reference.hpp"
#include "core/sptv_matrix.hpp"
#include "core/version.hpp"
#include "features/slice_graph.hpp"
#include "graph/interpreter.hpp"
#include "graph/sptv_graph.hpp"
#include "io/staged_folder.hpp"
#include "io/tensor_file.hpp"
#include "models/slice_selector.hpp"
#include "models/stream_model.hpp"
#include "runtime/nvrtc.hpp"
#include "runtime/stats.hpp"
#include "search/sptv_designs.hpp"
#include "search/sptv_gpu.hpp"
#include "search/sptv_predict.hpp"

namespace sparsetune::search {

namespace {

using json = nlohmann::json;

std::string tensor_name(const std::string& path) {
  std::string n = std::filesystem::path(path).filename().string();
  for (const char* ext : {".gz", ".tns", ".safetensors"})
    if (n.size() > std::string(ext).size() && n.ends_with(ext))
      n.resize(n.size() - std::string(ext).size());
  return n;
}

}  // namespace

std::string default_slice_model(const std::string& arch) {
  std::string dir = std::string(SPARSETUNE_CONFIG_DIR);
  if (const char* d = std::getenv("SPARSETUNE_CONFIG_DIR"); d && *d) dir = d;
  return dir + "/models/" + arch + "/slice_gcn.safetensors";
}

TuneOutcome tune_sptv(const SptvTuneOptions& o) {
  if (o.dtype != "f64" && o.dtype != "f32")
    throw Error("tune --op sptv: --dtype must be f64 or f32 (got '" + o.dtype + "')");
  // Options checked before the tensor is read (minutes at 10^8 entries).
  if (o.batches < 1 || o.batches > 64) throw Error("tune --op sptv: --batches must be 1 to 64");
  if (o.coo_block_nnz < 0)
    throw Error("tune --op sptv: --coo-block-nnz must be 0 (chosen per part) or more");
  if (o.hyb_width < 0 || o.hyb_width > (1 << 30))
    throw Error("tune --op sptv: --hyb-width must be 1 to 2^30, or 0 for the default (got " +
                std::to_string(o.hyb_width) + ")");
  // Each step's seconds at -v: where a tune of a large tensor spends its time.
  auto last = std::chrono::steady_clock::now();
  const auto step = [&](const char* what) {
    const auto now = std::chrono::steady_clock::now();
    spdlog::debug("tune --op sptv: {} {:.3f} s", what,
                  std::chrono::duration<double>(now - last).count());
    last = now;
  };
  const std::string out_dir =
      o.out_dir.empty() ? tensor_name(o.tensor) + ".mode" + std::to_string(o.mode) + ".tuned"
                        : o.out_dir;
  io::StagedFolder::check_target(out_dir);  // before a search whose outputs it would refuse
  const SparseTensor t = io::read_tensor(o.tensor);
  step("read");
  if (t.order() < 2) throw Error(o.tensor + ": SpTV needs a tensor of order 2 or more");
  if (o.mode < 0 || o.mode >= t.order())
    throw Error(o.tensor + ": --mode " + std::to_string(o.mode) + " is not a mode of this order-" +
                std::to_string(t.order()) + " tensor (0.." + std::to_string(t.order() - 1) + ")");
  const std::string arch = o.arch.empty() ? "sm_90" : o.arch;
  runtime::check_arch(arch);
  const SptvMatrix m = sptv_matrix(t, o.mode, o.slice_mode);
  // Dense along two modes whatever the entries: v and a column scratch (the multiplied mode),
  // and one start per slice (the slice mode); about 64 bytes an entry besides. Refused here,
  // before the slices' inputs are built, when a mode of billions is declared for a few entries.
  check_memory_need(24.0 * static_cast<double>(m.a.cols) + 16.0 * static_cast<double>(m.slices) +
                        64.0 * static_cast<double>(t.nnz()),
                    o.tensor + ": SpTV along mode " + std::to_string(o.mode) + " (" +
                        std::to_string(m.a.cols) + " long, sliced along " +
                        std::to_string(m.slices) + ")");
  step("matrix view");

  // Two-stage selection, or one format forced on every slice.
  std::optional<graph::SliceFormat> forced;
  if (!o.slice_format.empty()) {
    forced = graph::slice_format_from_name(o.slice_format);
    if (!forced)
      throw Error("tune --op sptv: --slice-format must be CSR, COO, ELL, HYB or Dense (got '" +
                  o.slice_format + "')");
  }
  if (forced == graph::SliceFormat::Dense) {
    // Dense stores every column of every fiber: refuse what would not fit, before trying.
    const double values = static_cast<double>(m.a.rows) * static_cast<double>(m.a.cols);
    if (values > 16.0 * static_cast<double>(m.a.nnz()) + 67108864.0)
      throw Error("tune --op sptv: --slice-format Dense would store " +
                  std::to_string(static_cast<long long>(values)) + " values for " +
                  std::to_string(m.a.nnz()) + " entries of " + o.tensor);
  }
  const auto inputs = features::slice_inputs(m);
  step("slice inputs");
  models::SelectOptions so;
  so.sparsity_threshold = o.sparsity_threshold;
  const std::string model_path = o.model.empty() ? default_slice_model(arch) : o.model;
  std::optional<models::SliceGcn> gcn;
  models::GcnModelInfo info;
  std::string predictor;
  if (forced) {
    predictor = std::string("forced: --slice-format ") + graph::slice_format_name(*forced);
  } else if (std::filesystem::exists(model_path)) {
    try {
      gcn = models::SliceGcn::load(model_path, &info);
      so.gcn = &*gcn;
      predictor = "slice-gcn " + model_path + " (labels: " + info.labels + ", " + info.date + ")";
    } catch (const InputError& e) {
      // A model named by --model must load; the shipped one may be stale (another format
      // version or feature list than this build's): the rule answers, and says why.
      if (!o.model.empty()) throw;
      predictor = std::string("structural rule: the shipped Slice-GCN is stale: ") + e.what();
      spdlog::warn("tune --op sptv: {}", predictor);
    }
  } else if (!o.model.empty()) {
    throw Error("cannot open the Slice-GCN model " + o.model);
  } else {
    predictor = "structural rule: no trained Slice-GCN for " + arch + " (" + model_path +
                "); train one from GPU-measured slice labels";
  }
  auto choices = forced ? std::vector<models::SliceChoice>{} : models::select_formats(inputs, so);
  if (forced)
    for (const auto& in : inputs)
      choices.push_back({in.slice, static_cast<int>(*forced), "forced"});
  step("selection");
  SptvDesignContext dc{m,
                       inputs,
                       graph::slice_stats(m),
                       {},
                       o.hyb_width,
                       o.batches,
                       "sptv-" + tensor_name(o.tensor) + "-mode" + std::to_string(o.mode),
                       o.coo_block_nnz};
  dc.emit.design = graph::sptv_design_options(m, o.dtype);
  // Ranked by transfers the pipeline's time follows the bytes it sends: 24-bit column words.
  dc.emit.optimizer.split_words = o.rank_transfers;
  SptvDesign selected = design_sptv(dc, std::move(choices), o.coo_sorted);
  step("design");
  // The predicted design: the selection, or a single format that stores fewer bytes.
  std::optional<SptvPrediction> predicted;
  std::vector<models::SliceChoice> selection;  // set when a single format replaces it
  if (!forced) {
    predicted = predict_sptv_design(dc, selected, {.by_kernels = !o.rank_transfers});
    if (predicted->format >= 0) {
      // The selection is measured after the single formats unless it is one of them.
      if (std::none_of(kSingleSliceFormats.begin(), kSingleSliceFormats.end(),
                       [&](graph::SliceFormat f) { return selected.all_in(f); }))
        selection = std::move(selected.choices);
      selected = SptvDesign{};  // freed before the next one is built
      if (predicted->whole && !o.coo_sorted)
        selected = std::move(*predicted->whole);  // built to decide a close contest
      else
        selected = design_sptv(dc, predicted->choices(), o.coo_sorted || predicted->coo_sorted);
      predicted->whole.reset();
    }
    step("prediction");
  }
  std::int64_t max_len = 1;
  for (std::int64_t r = 0; r < m.a.rows; ++r) max_len = std::max(max_len, m.a.row_length(r));

  // With a budget and a GPU (and no format forced), the predicted design against the others.
  std::string run_arch = arch;
  std::optional<codegen::PlanInputs> plan_inputs;
  SptvSearch searched;
  if (o.budget_s > 0 && o.use_gpu && !forced) {
    plan_inputs = sptv_plan_inputs(t, m, o.dtype, max_len);
    SptvSearchOptions so;
    so.budget_s = o.budget_s;
    so.rank_transfers = o.rank_transfers;
    so.dtype = o.dtype;
    so.max_len = max_len;
    so.launch = o.launch;
    if (predicted && predicted->format >= 0) {
      so.first_label = predicted->design;
      so.selection = std::move(selection);
      so.selection_coo_sorted = o.coo_sorted;
    }
    searched = search_sptv_designs(dc, std::move(selected), t, *plan_inputs, so, &run_arch);
  } else {
    searched.best = std::move(selected);
  }
  const SptvDesign& best = searched.best;
  const auto& e = best.emitted;
  const auto& g = best.graph;
  json slices = json::array();
  for (std::size_t i = 0; i < best.choices.size(); ++i)
    slices.push_back({{"slice", best.choices[i].slice},
                      {"format", models::slice_format_classes()[best.choices[i].format]},
                      {"by", best.choices[i].by},
                      {"nnz", inputs[i].globals[2]},
                      {"density", inputs[i].density}});

  // CPU check: the interpreter's walk of the format against the fp64 SpTV reference (the one the
  // GPU runs were checked against, when they ran: the same v).
  if (!plan_inputs) plan_inputs = sptv_plan_inputs(t, m, o.dtype, max_len);
  step("reference");
  const auto y = graph::interpret(e.format, plan_inputs->x);
  step("interpreter");
  const double cpu_error = relative_l2_error(y, plan_inputs->y_ref);
  const double tolerance = runtime::error_tolerance(runtime::parse_dtype(o.dtype), max_len);
  if (!(cpu_error <= tolerance))
    throw Error("tune --op sptv: CPU check failed: relative error " + std::to_string(cpu_error) +
                " > " + std::to_string(tolerance));

  // NVRTC, for the GPU's architecture when one runs the kernels, else for `arch`.
  json gpu = {{"ran", false}, {"note", "--budget 0: predicted only, nothing ran on a GPU"}};
  if (searched.gpu && o.rank_transfers) {
    gpu = *searched.gpu;  // measured in the search, pipeline included
  } else if (o.budget_s > 0 && o.use_gpu) {
    const SptvGpuInput in{.emitted = e,
                          .tensor = t,
                          .view = m,
                          .format_of_slice = best.format_of,
                          .hyb_width = best.hyb_width,
                          .coo_block_nnz = best.coo_block_nnz,
                          .dtype = o.dtype,
                          .max_len = max_len,
                          .launch = o.launch,
                          .inputs = &*plan_inputs,
                          .device_run = searched.gpu ? &*searched.gpu : nullptr,
                          .optimizer = dc.emit.optimizer};
    gpu = sptv_gpu_runs(in, &run_arch);
  }
  if (gpu.value("ran", false)) gpu["ranked_by"] = o.rank_transfers ? "transfers" : "device";
  runtime::CompileOptions co;
  co.arch = run_arch;
  step("gpu runs");
  const auto compiled = runtime::compile({"sptv", e.kernels.source}, co, nullptr);
  step("nvrtc");
  if (gpu.value("ran", false) && !gpu.value("verified", false))
    throw Error(
        "tune --op sptv: the kernels ran on the GPU but were not verified against the fp64 "
        "reference: " +
        gpu.dump());

  TuneOutcome out;
  out.out_dir = out_dir;
  io::StagedFolder staged(out.out_dir, io::StagedFolder::Outputs::one_run);
  codegen::stage_emitted(e, g, staged);
  out.files = staged.files();
  out.files.push_back((std::filesystem::path(out.out_dir) / "report.json").string());
  json report = {
      {"tool_version", kVersion},
      {"tensor", {{"path", o.tensor}, {"dims", t.dims}, {"nnz", t.nnz()}, {"order", t.order()}}},
      {"op", "sptv"},
      {"mode", o.mode},
      {"slice_mode", m.slice_mode},
      {"dtype", o.dtype},
      {"matrix_view", {{"rows", m.a.rows}, {"cols", m.a.cols}, {"nnz", m.a.nnz()}}},
      {"selection",
       {{"sparsity_threshold", o.sparsity_threshold},
        {"predictor", predictor},
        {"predicted",
         predicted ? json{{"design", predicted->design}, {"candidates", predicted->candidates}}
                   : json(nullptr)},
        {"slices", best.choices.size()},
        {"search", searched.rows},
        {"by_format", best.slices_by_format()},
        {"hyb_width", best.hyb_width},
        {"coo_sorted", best.coo_sorted()}}},
      {"slices", slices},
      {"graph", graph::graph_to_json(g)},
      {"graph_line", graph::describe(g)},
      {"store_only", e.format.store_only},
      {"stream_model", gpu.contains("pipeline") && gpu["pipeline"].contains("model")
                           ? gpu["pipeline"]["model"]
                           : assumed_stream_model(e.format, o.dtype)},
      {"format_bytes", graph::stored_bytes(e.format)},
      {"cpu_check", {{"error", cpu_error}, {"tolerance", tolerance}}},
      {"compile", {{"arch", run_arch}, {"nvrtc", runtime::nvrtc_version()}, {"log", compiled.log}}},
      {"measured", gpu.value("ran", false)},
      {"gpu", gpu},
      {"files", out.files}};
  staged.add("report.json", report.dump(2) + "\n");
  staged.commit();
  step("outputs");
  out.report = std::move(report);
  return out;
}

}  // namespace sparsetune::search
