#include "search/slice_timings.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "codegen/emit.hpp"
#include "codegen/launch_plan.hpp"
#include "core/error.hpp"
#include "core/parallel_for.hpp"
#include "features/slice_graph.hpp"
#include "graph/slice_assignment.hpp"
#include "graph/sptv_graph.hpp"
#include "io/safetensors.hpp"
#include "io/slice_source.hpp"
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

Replicated replicate_slices(const SptvMatrix& m, const std::vector<std::int64_t>& slices,
                            const std::vector<int>& copies) {
  if (slices.size() != copies.size()) throw Error("replicate_slices: one count per slice");
  std::vector<std::vector<std::int64_t>> rows_of(m.slices);
  for (std::int64_t r = 0; r < m.a.rows; ++r) rows_of[m.row_slice[r]].push_back(r);
  Replicated out;
  SptvMatrix& v = out.view;
  v.dims = m.dims;
  v.mode = m.mode;
  v.slice_mode = m.slice_mode;
  v.a.cols = m.a.cols;
  v.a.row_ptr.push_back(0);
  for (std::size_t i = 0; i < slices.size(); ++i) {
    if (copies[i] < 1) throw Error("replicate_slices: at least one copy per slice");
    for (int c = 0; c < copies[i]; ++c) {
      for (auto r : rows_of.at(slices[i])) {
        for (auto k = m.a.row_ptr[r]; k < m.a.row_ptr[r + 1]; ++k) {
          v.a.col_idx.push_back(m.a.col_idx[k]);
          v.a.val.push_back(m.a.val[k]);
        }
        v.a.row_ptr.push_back(static_cast<std::int64_t>(v.a.col_idx.size()));
        v.row_slice.push_back(v.slices);
        ++v.a.rows;
      }
      out.part_of_slice.push_back(static_cast<int>(i));
      ++v.slices;
    }
  }
  v.dims[v.slice_mode] = v.slices;
  out.parts = static_cast<int>(slices.size());
  return out;
}

std::vector<int> slice_copies(const SptvMatrix& m, const std::vector<std::int64_t>& slices,
                              std::int64_t target_rows, int max_copies, std::int64_t max_entries) {
  std::vector<std::int64_t> rows(m.slices, 0);
  for (auto s : m.row_slice) ++rows[s];
  const auto nnz = graph::slice_entries(m);
  std::vector<int> out;
  for (auto s : slices) {
    const std::int64_t r = std::max<std::int64_t>(1, rows.at(s));
    const std::int64_t cap = std::min<std::int64_t>(
        std::max(1, max_copies), max_entries / std::max<std::int64_t>(1, nnz.at(s)));
    out.push_back(static_cast<int>(
        std::clamp<std::int64_t>((target_rows + r - 1) / r, 1, std::max<std::int64_t>(1, cap))));
  }
  return out;
}

std::vector<std::size_t> slice_batches(const std::vector<std::int64_t>& sizes,
                                       std::int64_t budget) {
  std::vector<std::size_t> starts;
  std::int64_t held = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (starts.empty() || held + sizes[i] > budget) {
      starts.push_back(i);
      held = 0;
    }
    held += sizes[i];
  }
  starts.push_back(sizes.size());
  return starts;
}

SliceDesign design_slices(const Replicated& r, graph::SliceFormat fmt, int hyb_width,
                          const std::string& dtype) {
  graph::Graph g;
  g.name = std::string("slices-") + graph::slice_format_name(fmt);
  g.op = "sptv";
  graph::OpNode div{"SLICE_DIV", {{"count", r.parts}}, {}};
  graph::set_slice_assignment(div.params, {r.part_of_slice.begin(), r.part_of_slice.end()});
  // Each sampled slice's lanes from its own fibers, as a part of its slices alone would get.
  const auto stats = graph::slice_stats(r.view);
  std::vector<std::vector<std::int64_t>> slices_of(r.parts);
  for (std::size_t s = 0; s < r.part_of_slice.size(); ++s)
    slices_of.at(r.part_of_slice[s]).push_back(static_cast<std::int64_t>(s));
  for (int p = 0; p < r.parts; ++p)
    div.branches.push_back(graph::slice_format_ops(
        fmt, hyb_width, graph::part_lanes(fmt, stats, slices_of[p], hyb_width)));
  g.ops.push_back(std::move(div));
  graph::validate(g, "slice timing graph");
  const std::vector<graph::SliceFormat> format_of(r.view.slices, fmt);
  codegen::EmitOptions eo;
  eo.design = graph::sptv_design_options(r.view, dtype);
  eo.sptv = graph::sptv_slices(r.view, format_of);
  SliceDesign d{codegen::generate(g, r.view.a, eo), {}, json::array()};
  d.plan = codegen::make_launch_plan(d.emitted.format, d.emitted.kernels, g.name);
  for (const auto& launches : branch_launches(d.emitted.format, d.plan, r.parts))
    d.groups.push_back(launches);
  return d;
}

SlicePlan plan_slices(const SptvMatrix& full, const SliceTimingOptions& o) {
  SlicePlan p;
  p.chosen = sample_slices(full, o.max_slices, o.min_nnz);
  if (p.chosen.empty()) return p;
  p.m = keep_slices(full, p.chosen);
  p.copies = slice_copies(p.m, p.chosen, o.target_rows, o.max_copies, o.slice_entries);
  std::vector<char> hyb(static_cast<std::size_t>(p.m.slices), 0);
  for (const auto sl : p.chosen) hyb[static_cast<std::size_t>(sl)] = 1;
  p.hyb_width = graph::hyb_width(p.m, hyb);
  const auto nnz = graph::slice_entries(p.m);
  std::vector<std::int64_t> entries;
  for (std::size_t i = 0; i < p.chosen.size(); ++i)
    entries.push_back(p.copies[i] * nnz[p.chosen[i]]);
  p.batch_starts = slice_batches(entries, o.design_entries);
  return p;
}

SliceTimingResult time_slices(const SliceTimingOptions& o) {
  return time_slices(io::read_slice_source(o.tensor).tensor, o);
}

SliceTimingResult time_slices(const SparseTensor& t, const SliceTimingOptions& o) {
  if (o.dtype != "f64" && o.dtype != "f32")
    throw Error("slice-gcn collect: --dtype must be f64 or f32 (got '" + o.dtype + "')");
  if (o.max_slices < 1) throw Error("slice-gcn collect: --max-slices must be at least 1");
  for (const auto& [name, value] :
       {std::pair<const char*, std::int64_t>{"--target-rows", o.target_rows},
        {"--max-copies", o.max_copies},
        {"--slice-entries", o.slice_entries},
        {"--design-entries", o.design_entries},
        {"--runs", o.runs}})
    if (value < 1)
      throw Error(std::string("slice-gcn collect: ") + name + " must be at least 1 (got " +
                  std::to_string(value) + ")");
  if (t.order() < 2) throw Error(o.tensor + ": SpTV needs a tensor of order 2 or more");
  if (o.mode < 0 || o.mode >= t.order())
    throw Error(o.tensor + ": --mode " + std::to_string(o.mode) + " is not a mode of this order-" +
                std::to_string(t.order()) + " tensor");
  const SlicePlan plan = plan_slices(sptv_matrix(t, o.mode), o);
  SliceTimingResult out;
  if (plan.chosen.empty()) {
    out.notes.push_back("no slice of at least " + std::to_string(o.min_nnz) + " entries");
    return out;
  }
  const SptvMatrix& m = plan.m;
  const auto& chosen = plan.chosen;
  const auto& copies = plan.copies;
  const int h = plan.hyb_width;

  runtime::Worker worker(o.launch);
  const auto dev = worker.call({{"job", "device"}}, 60);
  if (!dev.ok)
    throw Error("slice-gcn collect needs a GPU: " +
                (dev.error.empty() ? std::string("no CUDA device") : dev.error));
  const auto& d = dev.body.at("device");
  runtime::CompileOptions co;
  co.arch = d.value("arch", std::string("sm_90"));
  out.device = d.value("name", std::string("unknown GPU"));

  const auto v = sptv_check_v(t.dims[o.mode], o.dtype);
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

  // One batch of sampled slices: every format designed first, then compiled at once on all
  // cores, then run one by one.
  const auto time_batch = [&](const std::vector<std::int64_t>& batch, const std::vector<int>& n_of,
                              std::size_t batch_no) {
    struct Planned {
      int format;
      std::vector<std::int64_t> slices;
      std::vector<int> copies;
      Replicated rep;
      SliceDesign design;
    };
    // The formats' designs and plan inputs are built on a thread each (a design of 2^24
    // entries takes seconds); only the GPU runs are one after another.
    std::vector<Planned> planned;
    for (int f = 0; f < graph::kSliceFormats; ++f) {
      const auto fmt = static_cast<graph::SliceFormat>(f);
      // Dense only where a slice's copies fit the dense budget: the same copies as the other
      // formats, so that every format is timed at the same occupancy.
      Planned p{f, batch, n_of, {}, {}};
      if (fmt == graph::SliceFormat::Dense) {
        p.slices.clear();
        p.copies.clear();
        for (std::size_t i = 0; i < batch.size(); ++i)
          if (dense_values(m, batch[i]) * n_of[i] <= o.slice_dense)
            p.slices.push_back(batch[i]), p.copies.push_back(n_of[i]);
        if (p.slices.size() < batch.size())
          out.notes.push_back(std::string(graph::slice_format_name(fmt)) + ": " +
                              std::to_string(batch.size() - p.slices.size()) +
                              " slices' copies exceed " + std::to_string(o.slice_dense) +
                              " dense values, not timed");
        if (p.slices.empty()) continue;
      }
      planned.push_back(std::move(p));
    }
    std::vector<std::string> failed(planned.size());
    parallel_for(static_cast<int>(planned.size()), static_cast<int>(planned.size()), [&](int i) {
      auto& p = planned[i];
      try {
        p.rep = replicate_slices(m, p.slices, p.copies);
        p.design = design_slices(p.rep, static_cast<graph::SliceFormat>(p.format), h, o.dtype);
      } catch (const Error& e) {
        failed[i] = e.what();
      }
    });
    std::vector<runtime::CompileJob> jobs;
    std::vector<std::size_t> job_of;  // planned index of each job
    for (std::size_t i = 0; i < planned.size(); ++i) {
      const std::string name =
          graph::slice_format_name(static_cast<graph::SliceFormat>(planned[i].format));
      if (!failed[i].empty()) {
        out.notes.push_back(name + ": " + failed[i]);
        continue;
      }
      jobs.push_back({"slices-" + name, planned[i].design.emitted.kernels.source});
      job_of.push_back(i);
    }
    const auto compiled = runtime::compile_batch(jobs, co, nullptr);

    // Each compiled design's plan file, written on a thread each.
    std::vector<std::string> paths(jobs.size());
    std::vector<std::string> unwritten(jobs.size());
    parallel_for(static_cast<int>(jobs.size()), static_cast<int>(jobs.size()), [&](int j) {
      if (!compiled[j].ok) return;
      const auto& view = planned[job_of[j]].rep.view;
      try {
        const auto in = codegen::spmv_plan_inputs(o.dtype, view.a, v);
        std::int64_t max_len = 1;
        for (std::int64_t r = 0; r < view.a.rows; ++r)
          max_len = std::max(max_len, view.a.row_length(r));
        paths[j] =
            (dir / (jobs[j].name + "-" + std::to_string(batch_no) + ".safetensors")).string();
        io::write_safetensors(paths[j], codegen::plan_file(planned[job_of[j]].design.plan,
                                                           compiled[j].cubin, max_len, &in));
      } catch (const Error& e) {
        unwritten[j] = e.what();
      }
    });

    for (std::size_t j = 0; j < jobs.size(); ++j) {
      const auto& p = planned[job_of[j]];
      const std::string& name = jobs[j].name;
      if (!compiled[j].ok) {
        out.notes.push_back(name + ": NVRTC: " + compiled[j].error);
        continue;
      }
      if (!unwritten[j].empty()) {
        out.notes.push_back(name + ": " + unwritten[j]);
        continue;
      }
      try {
        const auto r = worker.call({{"job", "plan"},
                                    {"plan", paths[j]},
                                    {"runs", o.runs},
                                    {"time_groups", p.design.groups}},
                                   600);
        std::error_code ec;
        std::filesystem::remove(paths[j], ec);
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
          out.records.push_back({label, o.mode, p.slices[k], p.format,
                                 times.at(k).get<double>() * 1e3 / p.copies[k]});
      } catch (const Error& e) {
        out.notes.push_back(name + ": " + e.what());
      }
    }
  };

  const auto& starts = plan.batch_starts;
  for (std::size_t b = 0; b + 1 < starts.size(); ++b)
    time_batch({chosen.begin() + starts[b], chosen.begin() + starts[b + 1]},
               {copies.begin() + starts[b], copies.begin() + starts[b + 1]}, b);
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
