#include "search/sptv_gpu.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <future>
#include <map>
#include <set>

#include "codegen/launch_plan.hpp"
#include "core/reference.hpp"
#include "graph/slice_assignment.hpp"
#include "io/safetensors.hpp"
#include "models/slice_gcn.hpp"
#include "models/stream_model.hpp"
#include "runtime/nvrtc.hpp"
#include "runtime/stream_overhead.hpp"

namespace sparsetune::search {

namespace {

using json = nlohmann::json;

// Bytes to the device and rows back per SLICE_DIV branch (a part's path starts with its branch).
struct Traffic {
  double h2d = 0, rows = 0;
};
// The slice format of each SLICE_DIV branch, from the graph's assignment and the slice table
// (-1 for a branch no non-empty slice went to).
std::vector<int> branch_formats(const graph::Format& f) {
  const auto& div = f.graph.at("ops").at(0);
  std::vector<int> b(div.at("count").get<std::size_t>(), -1);
  const auto assign = graph::slice_assignment(div);
  for (std::size_t i = 0; i < f.sptv.slice_idx.size(); ++i)
    b.at(static_cast<std::size_t>(assign.at(static_cast<std::size_t>(f.sptv.slice_idx[i])))) =
        static_cast<int>(f.sptv.slice_format[i]);
  return b;
}

// Bytes to the device and rows back of the formats present (ascending), summed over their
// parts (a part's path starts with its SLICE_DIV branch).
std::vector<Traffic> format_traffic(const graph::Format& f, std::vector<int>* formats) {
  const auto of_branch = branch_formats(f);
  std::vector<Traffic> per(graph::kSliceFormats);
  std::set<int> present;
  for (const auto& p : f.parts) {
    const auto b = static_cast<std::size_t>(std::stoll(p.path.substr(0, p.path.find('.'))));
    const int fmt = b < of_branch.size() ? of_branch[b] : -1;
    if (fmt < 0) continue;
    present.insert(fmt);
    for (const auto& [name, a] : p.arrays)
      if (a.stored()) per[fmt].h2d += static_cast<double>(a.length * io::dtype_size(a.dtype));
    per[fmt].rows += static_cast<double>(p.rows);
  }
  formats->assign(present.begin(), present.end());
  std::vector<Traffic> out;
  for (int fmt : *formats) out.push_back(per[fmt]);
  return out;
}

json model_rows(const std::vector<int>& formats, const std::vector<Traffic>& t, double value_bytes,
                double h2d_gbs, double d2h_gbs, double device_gbs, double lambda_us,
                const std::vector<double>* kernel_s, int max_streams) {
  json out = json::array();
  for (std::size_t i = 0; i < formats.size(); ++i) {
    models::StreamCosts c;
    c.h2d_s = models::transfer_s(t[i].h2d, h2d_gbs);
    c.d2h_s = models::transfer_s(t[i].rows * value_bytes, d2h_gbs);
    c.kernel_s = kernel_s ? (*kernel_s)[i]
                          : models::transfer_s(t[i].h2d + t[i].rows * value_bytes, device_gbs);
    c.lambda_s = lambda_us * 1e-6;
    const int n = models::best_stream_count(c, max_streams);
    out.push_back({{"format", models::slice_format_classes()[formats[i]]},
                   {"bytes_h2d", t[i].h2d},
                   {"bytes_d2h", t[i].rows * value_bytes},
                   {"kernel_us", c.kernel_s * 1e6},
                   {"streams", n},
                   {"modeled_us", models::pipeline_time(c, n) * 1e6}});
  }
  return out;
}

std::string temp_dir() {
  const auto d =
      std::filesystem::temp_directory_path() / ("sparsetune-sptv-" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d.string();
}

// The SLICE_DIV branch a part belongs to: its path starts with it.
std::int64_t part_branch(const graph::PartFormat& p) {
  return std::stoll(p.path.substr(0, p.path.find('.')));
}

// The design's kernels run device-resident through the worker's `plan` job (20 timed runs,
// checked against inputs.y_ref); the plan file goes to `dir`.
runtime::WorkerReply plan_run(runtime::Worker& worker, const codegen::Emitted& e,
                              const codegen::PlanInputs& inputs, const std::string& arch,
                              const std::string& dir) {
  runtime::CompileOptions co;
  co.arch = arch;
  const auto path = dir + "/plan.safetensors";
  io::write_safetensors(
      path, codegen::plan_file(codegen::make_launch_plan(e.format, e.kernels, "sptv"),
                               runtime::compile({"sptv", e.kernels.source}, co, nullptr).cubin,
                               inputs.max_len, &inputs));
  return worker.call({{"job", "plan"}, {"plan", path}, {"runs", 20}}, 600);
}

}  // namespace

std::vector<std::vector<std::size_t>> branch_launches(const graph::Format& f,
                                                      const codegen::SpmvPlan& plan, int branches) {
  std::map<std::string, std::size_t> launch_of;
  for (std::size_t l = 0; l < plan.launches.size(); ++l) launch_of[plan.launches[l].kernel] = l;
  std::vector<std::vector<std::size_t>> out(static_cast<std::size_t>(std::max(0, branches)));
  for (const std::size_t i : f.launch_order()) {  // a storing part before the parts adding
    const auto& p = f.parts[i];
    const auto b = part_branch(p);
    const auto it = launch_of.find(p.kernel);
    if (b >= 0 && b < branches && it != launch_of.end())
      out[static_cast<std::size_t>(b)].push_back(it->second);
  }
  return out;
}

std::vector<double> sptv_check_v(std::int64_t n, const std::string& dtype) {
  auto v = codegen::plan_x(n, dtype, 3);
  for (auto& x : v)
    if (x == 0.0) x = 0.5;
  return v;
}

std::vector<std::vector<std::array<std::int64_t, 2>>> branch_y_runs(const graph::Format& f,
                                                                    int branches,
                                                                    std::int64_t merge_gap) {
  std::vector<std::vector<std::array<std::int64_t, 2>>> out(
      static_cast<std::size_t>(std::max(0, branches)));
  std::vector<int> owner(static_cast<std::size_t>(std::max<std::int64_t>(0, f.rows)), -1);
  for (const auto& p : f.parts) {
    if (p.n_bmtb == 0) continue;
    if (!p.has(graph::Arr::origin_row)) return {};
    const auto b = part_branch(p);
    if (b < 0 || b >= branches) return {};
    for (auto r : p.array(graph::Arr::origin_row).ints)
      if (r >= 0 && r < f.rows) owner[static_cast<std::size_t>(r)] = static_cast<int>(b);
  }
  for (std::int64_t r = 0; r < f.rows; ++r) {
    const int b = owner[static_cast<std::size_t>(r)];
    if (b < 0) continue;
    auto& runs = out[static_cast<std::size_t>(b)];
    if (!runs.empty() && r - runs.back()[1] <= merge_gap)
      runs.back()[1] = r + 1;
    else
      runs.push_back({r, r + 1});
  }
  return out;
}

json assumed_stream_model(const graph::Format& f, const std::string& dtype) {
  std::vector<int> formats;
  const auto t = format_traffic(f, &formats);
  return {{"note",
           "eq. (20)-(24) with assumed constants (PCIe 25 GB/s, device 2000 GB/s, lambda 10 us, "
           "at most 32 streams): nothing was measured"},
          {"formats", model_rows(formats, t, dtype == "f64" ? 8.0 : 4.0, 25.0, 25.0, 2000.0, 10.0,
                                 nullptr, 32)}};
}

codegen::PlanInputs sptv_plan_inputs(const SparseTensor& tensor, const SptvMatrix& view,
                                     const std::string& dtype, std::int64_t max_len) {
  codegen::PlanInputs inputs;
  inputs.x = sptv_check_v(tensor.dims[view.mode], dtype);
  inputs.y_ref = sptv_reference_in_view_order(tensor, view, inputs.x).val;  // not the IR's
  inputs.max_len = max_len;
  return inputs;
}

json sptv_device_run(const codegen::Emitted& e, const codegen::PlanInputs& inputs,
                     const runtime::WorkerLaunch& launch, std::string* arch,
                     const std::function<void()>& on_device) {
  runtime::Worker worker(launch);
  const auto dev = worker.call({{"job", "device"}}, 60);
  if (!dev.ok) return {{"ran", false}, {"note", dev.error.empty() ? "no CUDA device" : dev.error}};
  if (on_device) on_device();
  *arch = dev.body.at("device").value("arch", std::string("sm_90"));
  const std::string dir = temp_dir();
  const auto r = plan_run(worker, e, inputs, *arch, dir);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (!r.ok) return {{"ran", false}, {"note", r.error}};
  json res = r.body.at("result");
  res["ran"] = true;
  return res;
}

json sptv_gpu_runs(const SptvGpuInput& in, std::string* arch) {
  runtime::Worker worker(in.launch);
  const auto dev = worker.call({{"job", "device"}}, 60);
  if (!dev.ok) return {{"ran", false}, {"note", dev.error.empty() ? "no CUDA device" : dev.error}};
  const auto& d = dev.body.at("device");
  *arch = d.value("arch", std::string("sm_90"));
  if (in.on_device) in.on_device();
  const std::string device = d.value("name", std::string("unknown GPU"));
  runtime::CompileOptions co;
  co.arch = *arch;
  const codegen::PlanInputs inputs =
      in.inputs ? *in.inputs : sptv_plan_inputs(in.tensor, in.view, in.dtype, in.max_len);
  const std::string dir = temp_dir();
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup{dir};

  const auto& e = in.emitted;
  const int max_streams = 16;
  // Alg. 1 on the design cut into `cut` batches per format: its plan file, each format's
  // batches (their launches) and each batch's rows of y as runs.
  struct Batched {
    int cut = 1;
    std::string plan;
    std::int64_t format_bytes = 0;  // what the batches' copies send, alignment gaps aside
    std::vector<std::vector<std::vector<std::size_t>>> groups;  // format -> batch -> launches
    std::vector<json> group_runs;                               // format -> batch -> [[lo, hi)]
    std::int64_t run_rows = 0, run_count = 0;
  };
  auto batched_design = [&](int cut) {
    Batched out;
    out.cut = cut;
    const auto batched = graph::sptv_batched_graph(in.format_of_slice, graph::slice_stats(in.view),
                                                   in.hyb_width, cut, in.coo_block_nnz);
    codegen::EmitOptions eo;
    eo.design = graph::sptv_design_options(in.view, in.dtype);
    eo.optimizer = in.optimizer;
    eo.sptv = e.format.sptv;
    const auto be = codegen::generate(batched.graph, in.view.a, eo);
    out.format_bytes = graph::stored_bytes(be.format);
    const auto bplan = codegen::make_launch_plan(be.format, be.kernels, "sptv-pipeline");
    const int branches = batched.graph.ops.at(0).params.at("count").get<int>();
    const auto of_branch = branch_launches(be.format, bplan, branches);
    // y back batch by batch (Alg. 1, line 20): each batch's rows as runs of y, a run taking in a
    // gap of up to 16k entries (64 KiB of fp32) of other batches' rows rather than a copy more.
    const auto runs_of_branch = branch_y_runs(be.format, branches, 16384);
    for (int f = 0; f < graph::kSliceFormats; ++f) {
      std::vector<std::vector<std::size_t>> batches;
      json runs = json::array();
      for (int b : batched.branches[f])
        if (!of_branch.at(b).empty()) {
          batches.push_back(of_branch.at(b));
          json r = json::array();
          if (!runs_of_branch.empty())
            for (const auto& run : runs_of_branch.at(b)) {
              r.push_back({run[0], run[1]});
              out.run_rows += run[1] - run[0];
              ++out.run_count;
            }
          runs.push_back(r);
        }
      if (!batches.empty()) out.groups.push_back(batches), out.group_runs.push_back(runs);
    }
    if (runs_of_branch.empty()) out.run_count = -1;  // no runs: y comes back at the end only
    out.plan = dir + "/pipeline-" + std::to_string(cut) + ".safetensors";
    io::write_safetensors(
        out.plan,
        codegen::plan_file(
            bplan, runtime::compile({"sptv-pipeline", be.kernels.source}, co, nullptr).cubin,
            in.max_len, &inputs));
    return out;
  };
  // Both cuts are designed on host threads (each a whole Designer and Optimizer run, the largest
  // host cost at 10^8 entries) while the device-resident run below goes on; the GPU runs stay
  // one at a time.
  auto cut16_built = std::async(std::launch::async, batched_design, max_streams);
  auto cut1_built = std::async(std::launch::async, batched_design, 1);
  // Device-resident: the emitted format, as kernel.h runs it (unless the search already did).
  runtime::WorkerReply r;
  if (in.device_run) {
    r.ok = true;
    r.body = {{"result", *in.device_run}};
  } else {
    r = plan_run(worker, e, inputs, *arch, dir);
  }
  // A format larger than device memory still streams through the pipeline below.
  const bool too_large = !r.ok && r.error.find("emory") != std::string::npos;
  if (!r.ok && !too_large) return {{"ran", false}, {"note", r.error}};
  json res = too_large ? json{{"verified", true},
                              {"device_resident", "does not fit in device memory: " + r.error},
                              {"time_ms", {{"median", 0.0}}}}
                       : r.body.at("result");
  res["ran"] = true;
  res["setting"] = too_large ? "pipeline only (the format exceeds device memory)"
                             : "device-resident (format on the GPU, no transfers)";
  if (!res.value("verified", false)) return res;

  // λ and the copy bandwidths: cached per device, measured once.
  json pipe;
  auto over = runtime::cached_stream_overhead(device);
  pipe["from_cache"] = over.has_value();
  if (!over) {
    const auto m = worker.call({{"job", "stream_overhead"}}, 300);
    if (!m.ok) {
      res["pipeline"] = {{"note", "stream overhead not measured: " + m.error}};
      if (too_large) res["verified"] = false;  // nothing ran
      return res;
    }
    over = runtime::StreamOverhead{m.body.value("lambda_us", 0.0), m.body.value("h2d_gbs", 0.0),
                                   m.body.value("d2h_gbs", 0.0)};
    runtime::cache_stream_overhead(device, *over);
  }
  pipe["lambda_us"] = over->lambda_us;
  pipe["h2d_gbs"] = over->h2d_gbs;
  pipe["d2h_gbs"] = over->d2h_gbs;

  // The model's count per format: kernel time shared out by bytes of the device-resident run.
  std::vector<int> formats;
  const auto traffic = format_traffic(e.format, &formats);
  double total_bytes = 0;
  for (const auto& t : traffic) total_bytes += t.h2d;
  const double kernel_s = res["time_ms"].value("median", 0.0) * 1e-3;
  std::vector<double> ct;  // without a device-resident time: bytes at an assumed 2000 GB/s
  for (const auto& t : traffic)
    ct.push_back(kernel_s > 0 ? (total_bytes > 0 ? kernel_s * t.h2d / total_bytes : 0.0)
                              : models::transfer_s(t.h2d, 2000.0));
  const double value_bytes = in.dtype == "f64" ? 8.0 : 4.0;
  pipe["model"] = {{"note", "eq. (20)-(24) with lambda and copy bandwidths measured on " + device +
                                " and the device-resident kernel time shared by bytes"},
                   {"formats", model_rows(formats, traffic, value_bytes, over->h2d_gbs,
                                          over->d2h_gbs, 0.0, over->lambda_us, &ct, max_streams)}};

  auto run_with = [&](const Batched& b, const std::vector<int>& streams, bool per_batch) {
    json g = json::array();
    for (std::size_t i = 0; i < b.groups.size(); ++i) {
      g.push_back(
          {{"streams", streams[std::min(i, streams.size() - 1)]}, {"batches", b.groups[i]}});
      if (per_batch) g.back()["y_spans"] = b.group_runs[i];
    }
    return worker.call({{"job", "pipeline"}, {"plan", b.plan}, {"groups", g}, {"runs", 10}}, 600);
  };
  // Alg. 1 cuts every format into up to 16 batches, one per stream at most, and is timed at 1 to
  // 16 streams; one batch per format (what kernel.h's run_pipelined does with the default
  // --batches 1) is timed too: on a small tensor each batch's copies and synchronization cost
  // more than the overlap gains. Both ways of bringing y back are measured each time; the
  // fastest verified run counts. Per batch needs its runs, and not thousands of copies.
  const Batched cut16 = cut16_built.get(), cut1 = cut1_built.get();
  json measured = json::array();
  const Batched* best = nullptr;
  int best_n = 0;
  bool best_per_batch = false;
  double best_ms = 0;
  for (const Batched* b : {&cut16, &cut1}) {
    std::vector<bool> y_back_ways{false};
    if (b->run_count >= 0 && b->run_count <= 4096) y_back_ways.push_back(true);
    for (int n : b == &cut1 ? std::vector<int>{1} : std::vector<int>{1, 2, 4, 8, 16})
      for (bool per_batch : y_back_ways) {
        const auto p = run_with(*b, {n}, per_batch);
        const char* way = per_batch ? "per batch" : "at the end";
        json row = {{"batches", b->cut},
                    {"format_bytes", b->format_bytes},
                    {"streams", n},
                    {"y_back", way}};
        if (!p.ok) {
          row["error"] = p.error;
          measured.push_back(row);
          continue;
        }
        const auto& pr = p.body.at("result");
        const double ms = pr["time_ms"].value("median", 0.0);
        row["time_ms"] = ms;
        row["verified"] = pr.value("verified", false);
        measured.push_back(row);
        if (pr.value("verified", false) && (best_n == 0 || ms < best_ms))
          best = b, best_n = n, best_ms = ms, best_per_batch = per_batch;
      }
  }
  const Batched& kept = best ? *best : cut16;
  std::vector<int> model_n;
  for (const auto& row : pipe["model"]["formats"]) model_n.push_back(row["streams"].get<int>());
  // The model's counts are for Alg. 1's cut: it is judged against that cut's best stream count,
  // y brought back as that run brought it.
  int cut16_n = 0;
  bool cut16_per_batch = false;
  double cut16_ms = 0;
  for (const auto& row : measured)
    if (row.value("batches", 0) == cut16.cut && row.value("verified", false) &&
        (cut16_n == 0 || row["time_ms"].get<double>() < cut16_ms))
      cut16_ms = row["time_ms"].get<double>(), cut16_n = row["streams"].get<int>(),
      cut16_per_batch = row["y_back"] == "per batch";
  pipe["alg1_best_streams"] = cut16_n;
  pipe["alg1_best_ms"] = cut16_ms;
  if (model_n.size() == cut16.groups.size()) {
    const auto p = run_with(cut16, model_n, cut16_per_batch);
    if (p.ok)
      pipe["model_run"] = {{"time_ms", p.body.at("result")["time_ms"].value("median", 0.0)},
                           {"verified", p.body.at("result").value("verified", false)}};
  }
  pipe["setting"] = "with transfers: pinned host memory to y on the host (Alg. 1)";
  pipe["y_back"] = best_per_batch ? "per batch" : "at the end";
  pipe["y_back_runs"] = {{"copies", std::max<std::int64_t>(kept.run_count, 0)},
                         {"entries", kept.run_rows}};
  pipe["measured"] = measured;
  pipe["best_measured_batches"] = kept.cut;
  pipe["best_measured_streams"] = best_n;
  pipe["best_measured_ms"] = best_ms;
  res["pipeline"] = pipe;
  if (too_large) res["verified"] = best_n > 0;  // only the pipeline ran: it must have verified
  return res;
}

}  // namespace sparsetune::search
