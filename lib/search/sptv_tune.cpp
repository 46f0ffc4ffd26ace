#include "search/sptv_tune.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "codegen/emit.hpp"
#include "codegen/launch_plan.hpp"
#include "core/error.hpp"
#include "core/reference.hpp"
#include "core/sptv_matrix.hpp"
#include "core/version.hpp"
#include "features/slice_graph.hpp"
#include "graph/interpreter.hpp"
#include "graph/sptv_graph.hpp"
#include "io/staged_folder.hpp"
#include "io/tns.hpp"
#include "models/slice_selector.hpp"
#include "models/stream_model.hpp"
#include "runtime/nvrtc.hpp"
#include "runtime/stats.hpp"

namespace sparsetune::search {

namespace {

using json = nlohmann::json;

std::string tensor_name(const std::string& path) {
  std::string n = std::filesystem::path(path).filename().string();
  for (const char* ext : {".gz", ".tns"})
    if (n.size() > std::string(ext).size() && n.ends_with(ext))
      n.resize(n.size() - std::string(ext).size());
  return n;
}

// A deterministic v with no zero (every fiber's entries count).
std::vector<double> check_v(std::int64_t n, const std::string& dtype) {
  auto v = codegen::plan_x(n, dtype, 3);
  for (auto& x : v)
    if (x == 0.0) x = 0.5;
  return v;
}

// Runs the kernels on the GPU through the worker and checks them against the fp64 reference of
// the tensor; the reply's fields, or why nothing ran.
json verify_on_gpu(const codegen::Emitted& e, const SparseTensor& t, int mode,
                   const std::string& dtype, std::int64_t max_len, const SptvTuneOptions& o,
                   std::string* arch) {
  runtime::Worker worker(o.launch);
  const auto dev = worker.call({{"job", "device"}}, 60);
  if (!dev.ok) return {{"ran", false}, {"note", dev.error.empty() ? "no CUDA device" : dev.error}};
  *arch = dev.body.at("device").value("arch", std::string("sm_90"));
  runtime::CompileOptions co;
  co.arch = *arch;
  const auto compiled = runtime::compile({"sptv", e.kernels.source}, co, nullptr);
  const auto plan = codegen::make_launch_plan(e.format, e.kernels, "sptv");
  codegen::PlanInputs in;
  in.x = check_v(t.dims[mode], dtype);
  in.y_ref = sptv_reference(t, mode, in.x).val;  // independent of the IR
  in.max_len = max_len;
  const auto dir =
      std::filesystem::temp_directory_path() / ("sparsetune-sptv-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = (dir / "plan.safetensors").string();
  io::write_safetensors(path, codegen::plan_file(plan, compiled.cubin, max_len, &in));
  const auto r = worker.call({{"job", "plan"}, {"plan", path}, {"runs", 20}}, 600);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (!r.ok) return {{"ran", false}, {"note", r.error}};
  json res = r.body.at("result");
  res["ran"] = true;
  return res;
}

// Alg. 1's stream count per slice format from the model of eq. (20)-(24), with assumed constants
// until the pipeline measures them on a device: the bytes each format's parts move to the device
// (their stored arrays), its results back, kernels at the device's bandwidth.
json stream_plan(const graph::Format& f, const std::vector<int>& count, const std::string& dtype) {
  const double pcie_gbs = 25.0, device_gbs = 2000.0, lambda_s = 10e-6;
  const int max_streams = 32;
  std::vector<int> formats;  // the SLICE_DIV branches, in graph order
  for (int k = 0; k < graph::kSliceFormats; ++k)
    if (count[k] > 0) formats.push_back(k);
  json out = json::array();
  const double value_bytes = dtype == "f64" ? 8.0 : 4.0;
  for (std::size_t b = 0; b < formats.size(); ++b) {
    double bytes = 0, rows = 0;
    for (const auto& p : f.parts) {
      if (p.path.substr(0, p.path.find('.')) != std::to_string(b)) continue;
      for (const auto& [name, a] : p.arrays)
        if (a.stored()) bytes += static_cast<double>(a.length * io::dtype_size(a.dtype));
      rows += static_cast<double>(p.rows);
    }
    models::StreamCosts c;
    c.h2d_s = models::transfer_s(bytes, pcie_gbs);
    c.d2h_s = models::transfer_s(rows * value_bytes, pcie_gbs);
    c.kernel_s = models::transfer_s(bytes + rows * value_bytes, device_gbs);
    c.lambda_s = lambda_s;
    out.push_back({{"format", models::slice_format_classes()[formats[b]]},
                   {"bytes_h2d", bytes},
                   {"bytes_d2h", rows * value_bytes},
                   {"streams", models::best_stream_count(c, max_streams)},
                   {"modeled_us",
                    models::pipeline_time(c, models::best_stream_count(c, max_streams)) * 1e6}});
  }
  return {{"note",
           "eq. (20)-(24) with assumed constants (PCIe 25 GB/s, device 2000 GB/s, lambda 10 us, "
           "at most 32 streams); the pipeline of Alg. 1 is not built yet, so nothing measured "
           "them"},
          {"formats", out}};
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
  const SparseTensor t = io::read_tns(o.tensor);
  if (t.order() < 2) throw Error(o.tensor + ": SpTV needs a tensor of order 2 or more");
  if (o.mode < 0 || o.mode >= t.order())
    throw Error(o.tensor + ": --mode " + std::to_string(o.mode) + " is not a mode of this order-" +
                std::to_string(t.order()) + " tensor (0.." + std::to_string(t.order() - 1) + ")");
  const std::string arch = o.arch.empty() ? "sm_90" : o.arch;
  runtime::check_arch(arch);
  const SptvMatrix m = sptv_matrix(t, o.mode, o.slice_mode);

  // Two-stage selection.
  const auto inputs = features::slice_inputs(m);
  models::SelectOptions so;
  so.sparsity_threshold = o.sparsity_threshold;
  const std::string model_path = o.model.empty() ? default_slice_model(arch) : o.model;
  std::optional<models::SliceGcn> gcn;
  models::GcnModelInfo info;
  std::string predictor;
  if (std::filesystem::exists(model_path)) {
    gcn = models::SliceGcn::load(model_path, &info);
    so.gcn = &*gcn;
    predictor = "slice-gcn " + model_path + " (labels: " + info.labels + ", " + info.date + ")";
  } else if (!o.model.empty()) {
    throw Error("cannot open the Slice-GCN model " + o.model);
  } else {
    predictor = "structural rule: no trained Slice-GCN for " + arch + " (" + model_path +
                "); train one from GPU-measured slice labels";
  }
  const auto choices = models::select_formats(inputs, so);
  std::vector<graph::SliceFormat> format_of(m.slices, graph::SliceFormat::CSR);
  std::vector<int> count(graph::kSliceFormats, 0);
  json slices = json::array();
  for (std::size_t i = 0; i < choices.size(); ++i) {
    format_of[choices[i].slice] = static_cast<graph::SliceFormat>(choices[i].format);
    ++count[choices[i].format];
    slices.push_back({{"slice", choices[i].slice},
                      {"format", models::slice_format_classes()[choices[i].format]},
                      {"by", choices[i].by},
                      {"nnz", inputs[i].globals[2]},
                      {"density", inputs[i].density}});
  }
  std::vector<features::SliceInput> hyb;
  for (std::size_t i = 0; i < choices.size(); ++i)
    if (choices[i].format == 3) hyb.push_back(inputs[i]);
  const int h = o.hyb_width > 0 ? o.hyb_width : models::hyb_width(hyb);

  graph::Graph g = graph::sptv_graph(format_of, graph::nonempty_slices(m), h);
  g.name = "sptv-" + tensor_name(o.tensor) + "-mode" + std::to_string(o.mode);
  codegen::EmitOptions eo;
  eo.design = graph::sptv_design_options(m, o.dtype);
  eo.sptv = graph::sptv_slices(m, format_of);
  const auto e = codegen::generate(g, m.a, eo);

  // CPU check: the interpreter's walk of the format against the fp64 SpTV reference.
  const auto v = check_v(t.dims[o.mode], o.dtype);
  const auto y = graph::interpret(e.format, v);
  const double cpu_error = relative_l2_error(y, sptv_reference(t, o.mode, v).val);
  std::int64_t max_len = 1;
  for (std::int64_t r = 0; r < m.a.rows; ++r) max_len = std::max(max_len, m.a.row_length(r));
  const double tolerance = runtime::error_tolerance(runtime::parse_dtype(o.dtype), max_len);
  if (!(cpu_error <= tolerance))
    throw Error("tune --op sptv: CPU check failed: relative error " + std::to_string(cpu_error) +
                " > " + std::to_string(tolerance));

  // NVRTC, for the GPU's architecture when one runs the kernels, else for `arch`.
  std::string run_arch = arch;
  json gpu = {{"ran", false}, {"note", "--budget 0: predicted only, nothing ran on a GPU"}};
  if (o.budget_s > 0 && o.use_gpu)
    gpu = verify_on_gpu(e, t, o.mode, o.dtype, max_len, o, &run_arch);
  runtime::CompileOptions co;
  co.arch = run_arch;
  const auto compiled = runtime::compile({"sptv", e.kernels.source}, co, nullptr);
  if (gpu.value("ran", false) && !gpu.value("verified", false))
    throw Error("tune --op sptv: the kernels ran on the GPU but do not match the fp64 reference: " +
                gpu.dump());

  TuneOutcome out;
  out.out_dir = o.out_dir.empty()
                    ? tensor_name(o.tensor) + ".mode" + std::to_string(o.mode) + ".tuned"
                    : o.out_dir;
  io::StagedFolder staged(out.out_dir);
  codegen::stage_emitted(e, g, staged);
  out.files = staged.files();
  out.files.push_back((std::filesystem::path(out.out_dir) / "report.json").string());
  json by_format = json::object();
  for (int f = 0; f < graph::kSliceFormats; ++f)
    by_format[models::slice_format_classes()[f]] = count[f];
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
        {"slices", choices.size()},
        {"by_format", by_format},
        {"hyb_width", h}}},
      {"slices", slices},
      {"graph", graph::graph_to_json(g)},
      {"graph_line", graph::describe(g)},
      {"store_only", e.format.store_only},
      {"stream_model", stream_plan(e.format, count, o.dtype)},
      {"format_bytes", graph::stored_bytes(e.format)},
      {"cpu_check", {{"error", cpu_error}, {"tolerance", tolerance}}},
      {"compile", {{"arch", run_arch}, {"nvrtc", runtime::nvrtc_version()}, {"log", compiled.log}}},
      {"measured", gpu.value("ran", false)},
      {"gpu", gpu},
      {"files", out.files}};
  staged.add("report.json", report.dump(2) + "\n");
  staged.commit();
  out.report = std::move(report);
  return out;
}

}  // namespace sparsetune::search
