#include "search/slice_timings.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "codegen/emit.hpp"
#include "codegen/launch_plan.hpp"
#include "core/error.hpp"
#include "features/slice_graph.hpp"
#include "graph/sptv_graph.hpp"
#include "io/safetensors.hpp"
#include "io/tns.hpp"
#include "models/slice_gcn.hpp"
#include "models/slice_selector.hpp"
#include "runtime/nvrtc.hpp"
#include "search/sptv_gpu.hpp"

namespace sparsetune::search {

namespace {

using json = nlohmann::json;

// Values a Dense part of the slice stores: its fibers times the mode's length.
std::int64_t dense_values(const SptvMatrix& m, std::int64_t slice) {
  std::int64_t rows = 0;
  for (auto s : m.row_slice) rows += s == slice;
  return rows * m.a.cols;
}

}  // namespace

std::vector<std::int64_t> sample_slices(const SptvMatrix& m, int count, std::int64_t min_nnz) {
  const auto nnz = graph::slice_entries(m);
  std::vector<std::int64_t> ranked;
  for (std::int64_t s = 0; s < m.slices; ++s)
    if (nnz[s] > 0 && nnz[s] >= min_nnz) ranked.push_back(s);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](std::int64_t a, std::int64_t b) { return nnz[a] < nnz[b]; });
  std::vector<std::int64_t> out;
  const auto n = static_cast<std::int64_t>(ranked.size());
  if (count <= 0 || n == 0) return out;
  if (n <= count) {
    out = ranked;
  } else {
    // Evenly spaced ranks from the smallest to the largest: i (n-1) / (count-1).
    for (int i = 0; i < count; ++i)
      out.push_back(
          ranked[count == 1 ? n - 1 : static_cast<std::int64_t>(i) * (n - 1) / (count - 1)]);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

SptvMatrix keep_slices(const SptvMatrix& m, const std::vector<std::int64_t>& slices) {
  std::vector<bool> keep(m.slices, false);
  for (auto s : slices) keep.at(s) = true;
  SptvMatrix k;
  k.dims = m.dims;
  k.mode = m.mode;
  k.slice_mode = m.slice_mode;
  k.slices = m.slices;
  k.a.rows = 0;
  k.a.cols = m.a.cols;
  k.a.row_ptr.push_back(0);
  for (std::int64_t r = 0; r < m.a.rows; ++r) {
    if (!keep[m.row_slice[r]]) continue;
    for (auto i = m.a.row_ptr[r]; i < m.a.row_ptr[r + 1]; ++i) {
      k.a.col_idx.push_back(m.a.col_idx[i]);
      k.a.val.push_back(m.a.val[i]);
    }
    k.a.row_ptr.push_back(static_cast<std::int64_t>(k.a.col_idx.size()));
    k.row_slice.push_back(m.row_slice[r]);
    ++k.a.rows;
  }
  return k;
}

SliceDesign design_slices(const SptvMatrix& view, graph::SliceFormat fmt, int hyb_width,
                          const std::string& dtype) {
  const int f = static_cast<int>(fmt);
  const std::vector<graph::SliceFormat> format_of(view.slices, fmt);
  const auto entries = graph::slice_entries(view);
  const auto count = std::count_if(entries.begin(), entries.end(), [](auto n) { return n > 0; });
  const auto batched = graph::sptv_batched_graph(
      format_of, entries, hyb_width, static_cast<int>(std::max<std::int64_t>(1, count)));
  codegen::EmitOptions eo;
  eo.design = graph::sptv_design_options(view, dtype);
  eo.sptv = graph::sptv_slices(view, format_of);
  SliceDesign d{codegen::generate(batched.graph, view.a, eo), {}, json::array()};
  d.plan = codegen::make_launch_plan(d.emitted.format, d.emitted.kernels,
                                     std::string("slices-") + graph::slice_format_name(fmt));
  std::map<std::string, std::size_t> launch_of;
  for (std::size_t l = 0; l < d.plan.launches.size(); ++l) launch_of[d.plan.launches[l].kernel] = l;
  // Branch b of this format holds the b-th non-empty slice (one part per slice, in order).
  for (int b : batched.branches[f]) {
    json g = json::array();
    for (const auto& p : d.emitted.format.parts)
      if (p.path.substr(0, p.path.find('.')) == std::to_string(b) && launch_of.count(p.kernel))
        g.push_back(launch_of[p.kernel]);
    d.groups.push_back(g);
  }
  return d;
}

SliceTimingResult time_slices(const SliceTimingOptions& o) {
  if (o.dtype != "f64" && o.dtype != "f32")
    throw Error("slice-gcn collect: --dtype must be f64 or f32 (got '" + o.dtype + "')");
  if (o.max_slices < 1) throw Error("slice-gcn collect: --max-slices must be at least 1");
  const SparseTensor t = io::read_tns(o.tensor);
  if (t.order() < 2) throw Error(o.tensor + ": SpTV needs a tensor of order 2 or more");
  if (o.mode < 0 || o.mode >= t.order())
    throw Error(o.tensor + ": --mode " + std::to_string(o.mode) + " is not a mode of this order-" +
                std::to_string(t.order()) + " tensor");
  const SptvMatrix full = sptv_matrix(t, o.mode);
  const auto chosen = sample_slices(full, o.max_slices, o.min_nnz);
  SliceTimingResult out;
  if (chosen.empty()) {
    out.notes.push_back("no slice of at least " + std::to_string(o.min_nnz) + " entries");
    return out;
  }
  const SptvMatrix m = keep_slices(full, chosen);

  runtime::Worker worker(o.launch);
  const auto dev = worker.call({{"job", "device"}}, 60);
  if (!dev.ok)
    throw Error("slice-gcn collect needs a GPU: " +
                (dev.error.empty() ? std::string("no CUDA device") : dev.error));
  const auto& d = dev.body.at("device");
  runtime::CompileOptions co;
  co.arch = d.value("arch", std::string("sm_90"));
  out.device = d.value("name", std::string("unknown GPU"));

  // HYB's H as tune --op sptv sets it for these slices.
  std::vector<features::SliceInput> hyb;
  for (auto& in : features::slice_inputs(m))
    if (std::binary_search(chosen.begin(), chosen.end(), in.slice)) hyb.push_back(std::move(in));
  const int h = models::hyb_width(hyb);

  const auto v = sptv_check_v(t.dims[o.mode], o.dtype);
  const auto inputs = codegen::spmv_plan_inputs(o.dtype, m.a, v);
  const auto dir =
      std::filesystem::temp_directory_path() / ("sparsetune-slices-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  struct Cleanup {
    std::filesystem::path dir;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup{dir};
  const std::string label = o.label.empty() ? o.tensor : o.label;

  // Every format designed first, then compiled at once on all cores, then run one by one.
  struct Planned {
    int format;
    std::vector<std::int64_t> slices;
    SptvMatrix view;
    SliceDesign design;
  };
  std::vector<Planned> planned;
  for (int f = 0; f < graph::kSliceFormats; ++f) {
    const auto fmt = static_cast<graph::SliceFormat>(f);
    const std::string name = graph::slice_format_name(fmt);
    // Dense only where the slice's dense block is affordable; those slices form their own view.
    std::vector<std::int64_t> slices = chosen;
    if (fmt == graph::SliceFormat::Dense) {
      slices.clear();
      for (auto s : chosen)
        if (dense_values(m, s) <= o.max_dense) slices.push_back(s);
      if (slices.size() < chosen.size())
        out.notes.push_back(name + ": " + std::to_string(chosen.size() - slices.size()) +
                            " slices exceed " + std::to_string(o.max_dense) +
                            " dense values, not timed");
      if (slices.empty()) continue;
    }
    try {
      SptvMatrix view = slices.size() == chosen.size() ? m : keep_slices(m, slices);
      auto d = design_slices(view, fmt, h, o.dtype);
      if (d.groups.size() != slices.size())
        throw Error("one part per slice expected, got " + std::to_string(d.groups.size()));
      planned.push_back({f, std::move(slices), std::move(view), std::move(d)});
    } catch (const Error& e) {
      out.notes.push_back(name + ": " + e.what());
    }
  }
  std::vector<runtime::CompileJob> jobs;
  for (const auto& p : planned)
    jobs.push_back({std::string("slices-") +
                        graph::slice_format_name(static_cast<graph::SliceFormat>(p.format)),
                    p.design.emitted.kernels.source});
  const auto compiled = runtime::compile_batch(jobs, co, nullptr);

  for (std::size_t i = 0; i < planned.size(); ++i) {
    const auto& p = planned[i];
    const std::string name = jobs[i].name;
    if (!compiled[i].ok) {
      out.notes.push_back(name + ": NVRTC: " + compiled[i].error);
      continue;
    }
    try {
      const auto in =
          p.view.a.rows == m.a.rows ? inputs : codegen::spmv_plan_inputs(o.dtype, p.view.a, v);
      std::int64_t max_len = 1;
      for (std::int64_t r = 0; r < p.view.a.rows; ++r)
        max_len = std::max(max_len, p.view.a.row_length(r));
      const auto path = (dir / (name + ".safetensors")).string();
      io::write_safetensors(path,
                            codegen::plan_file(p.design.plan, compiled[i].cubin, max_len, &in));
      const auto r = worker.call(
          {{"job", "plan"}, {"plan", path}, {"runs", o.runs}, {"time_groups", p.design.groups}},
          600);
      if (!r.ok) {
        out.notes.push_back(name + ": " + r.error);
        continue;
      }
      const auto& res = r.body.at("result");
      if (!res.value("verified", false) || !res.contains("group_times_ms")) {
        out.notes.push_back(name + ": not verified against the fp64 reference");
        continue;
      }
      const auto& times = res["group_times_ms"];
      for (std::size_t k = 0; k < p.slices.size(); ++k)
        out.records.push_back(
            {label, o.mode, p.slices[k], p.format, times.at(k).get<double>() * 1e3});
    } catch (const Error& e) {
      out.notes.push_back(name + ": " + e.what());
    }
  }
  return out;
}

std::string slice_timings_csv(const std::vector<models::SliceTiming>& records) {
  std::ostringstream s;
  s << "tensor,mode,slice,format,time_us\n";
  s.precision(6);
  for (const auto& r : records)
    s << r.tensor << ',' << r.mode << ',' << r.slice << ','
      << models::slice_format_classes().at(r.format) << ',' << r.time_us << '\n';
  return s.str();
}

}  // namespace sparsetune::search
