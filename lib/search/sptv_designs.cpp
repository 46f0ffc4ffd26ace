#include "search/sptv_designs.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <functional>
#include <future>

#include "core/memory.hpp"
#include "core/parallel_for.hpp"
#include "graph/format.hpp"
#include "models/slice_gcn.hpp"
#include "search/sptv_gpu.hpp"

namespace sparsetune::search {

using json = nlohmann::json;

json SptvDesign::slices_by_format() const {
  json by = json::object();
  for (int f = 0; f < graph::kSliceFormats; ++f)
    by[models::slice_format_classes()[static_cast<std::size_t>(f)]] =
        count[static_cast<std::size_t>(f)];
  return by;
}

SptvDesign design_sptv(const SptvDesignContext& c, std::vector<models::SliceChoice> choices,
                       bool coo_sorted) {
  const auto t0 = std::chrono::steady_clock::now();
  SptvDesign d;
  d.choices = std::move(choices);
  d.format_of.assign(c.view.slices, graph::SliceFormat::CSR);
  d.count.assign(graph::kSliceFormats, 0);
  std::vector<char> hyb(static_cast<std::size_t>(c.view.slices), 0);
  for (std::size_t i = 0; i < d.choices.size(); ++i) {
    d.format_of[d.choices[i].slice] = static_cast<graph::SliceFormat>(d.choices[i].format);
    ++d.count[d.choices[i].format];
    if (d.choices[i].format == static_cast<int>(graph::SliceFormat::HYB))
      hyb[static_cast<std::size_t>(d.choices[i].slice)] = 1;
  }
  d.hyb_width = c.hyb_width > 0 ? c.hyb_width : graph::hyb_width(c.view, hyb);
  d.coo_block_nnz = !coo_sorted ? 0 : c.coo_block_nnz > 0 ? c.coo_block_nnz : graph::kSortedCooAuto;
  d.graph = c.batches == 1 ? graph::sptv_graph(d.format_of, c.stats, d.hyb_width, d.coo_block_nnz)
                           : graph::sptv_batched_graph(d.format_of, c.stats, d.hyb_width, c.batches,
                                                       d.coo_block_nnz)
                                 .graph;
  d.graph.name = c.name;
  auto opt = c.emit;
  opt.sptv = graph::sptv_slices(c.view, d.format_of);
  d.emitted = codegen::generate(d.graph, c.view.a, opt);
  d.design_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return d;
}

std::vector<double> sampled_bytes_per_entry(const SptvDesignContext& c,
                                            const std::vector<graph::SliceFormat>& formats,
                                            std::int64_t sample_nnz) {
  const SptvMatrix& m = c.view;
  const std::int64_t nnz = m.a.nnz();
  const std::int64_t stride =
      std::max<std::int64_t>(1, nnz / std::max<std::int64_t>(sample_nnz, 1));
  // The view's rows are grouped slice by slice: take every stride-th run of one slice.
  SptvMatrix s;
  s.dims = m.dims;
  s.mode = m.mode;
  s.slice_mode = m.slice_mode;
  s.slices = m.slices;
  s.a.cols = m.a.cols;
  s.a.row_ptr.push_back(0);
  std::vector<bool> kept(static_cast<std::size_t>(std::max<std::int64_t>(m.slices, 0)), false);
  std::int64_t run = -1;
  for (std::int64_t r = 0; r < m.a.rows; ++r) {
    const std::int64_t slice = m.row_slice[static_cast<std::size_t>(r)];
    if (r == 0 || slice != m.row_slice[static_cast<std::size_t>(r - 1)]) {
      ++run;
      kept[static_cast<std::size_t>(slice)] = run % stride == 0;
    }
    if (!kept[static_cast<std::size_t>(slice)]) continue;
    for (std::int64_t k = m.a.row_ptr[r]; k < m.a.row_ptr[r + 1]; ++k) {
      s.a.col_idx.push_back(m.a.col_idx[static_cast<std::size_t>(k)]);
      s.a.val.push_back(m.a.val[static_cast<std::size_t>(k)]);
    }
    s.a.row_ptr.push_back(static_cast<std::int64_t>(s.a.col_idx.size()));
    s.row_slice.push_back(slice);
  }
  s.a.rows = static_cast<std::int64_t>(s.row_slice.size());
  std::vector<features::SliceInput> inputs;
  for (const auto& in : c.inputs)
    if (in.slice >= 0 && in.slice < m.slices && kept[static_cast<std::size_t>(in.slice)])
      inputs.push_back(in);
  SptvDesignContext sc{s, inputs, graph::slice_stats(s), c.emit, c.hyb_width,
                       1, c.name, c.coo_block_nnz};
  sc.emit.design.slices = graph::sptv_design_options(s, c.emit.design.dtype).slices;
  // The formats' designs are independent: one host thread each.
  std::vector<std::future<double>> bytes;
  for (const auto f : formats)
    bytes.push_back(std::async(std::launch::async, [&sc, &inputs, &s, f] {
      std::vector<models::SliceChoice> choices;
      for (const auto& in : inputs) choices.push_back({in.slice, static_cast<int>(f), "sample"});
      const auto d = design_sptv(sc, std::move(choices));
      return s.a.nnz() > 0 ? static_cast<double>(graph::stored_bytes(d.emitted.format)) /
                                 static_cast<double>(s.a.nnz())
                           : 0.0;
    }));
  std::vector<double> out;
  for (auto& b : bytes) out.push_back(b.get());
  return out;
}

namespace {
// Designs built ahead of their GPU runs at once: one per four cores, at most 4, and as many as
// half the memory holds beside the two batched cuts of the design being run (a design being
// built peaks at about 130 bytes per entry: 1.3 GB at 10^7 entries on the CPU).
std::size_t designs_ahead(std::int64_t nnz) {
  const double memory = physical_memory_bytes();  // 0 when unknown: one ahead
  const double per_design = 130.0 * static_cast<double>(std::max<std::int64_t>(nnz, 1));
  const auto fit = static_cast<std::int64_t>(0.5 * memory / per_design) - 2;
  return static_cast<std::size_t>(
      std::clamp<std::int64_t>(std::min<std::int64_t>(fit, all_cores() / 4), 1, 4));
}
}  // namespace

SptvSearch search_sptv_designs(const SptvDesignContext& c, SptvDesign first,
                               const SparseTensor& tensor, const codegen::PlanInputs& inputs,
                               const SptvSearchOptions& o, std::string* arch) {
  const auto start = std::chrono::steady_clock::now();
  SptvSearch s;
  s.best = std::move(first);
  json runs;
  // The single formats to try (not the selection itself), each designed on a host thread ahead of
  // its GPU runs, which stay one at a time: up to designs_ahead() at once, the first ones as soon
  // as the selection's run has found a device, the next when one is taken.
  struct Single {
    graph::SliceFormat format;
    bool coo_sorted = false;
    bool selection = false;  // o.selection rather than one format
  };
  std::vector<Single> singles;
  // The first design is not measured twice: one format for every slice is left out, COO in the
  // form (atomic or column-sorted) that the first design has.
  const bool first_sorted_coo = s.best.all_in(graph::SliceFormat::COO) && s.best.coo_sorted();
  for (auto f : kSingleSliceFormats)
    if (!s.best.all_in(f) || (f == graph::SliceFormat::COO && first_sorted_coo))
      singles.push_back({f});
  if (!o.rank_transfers && !first_sorted_coo) singles.push_back({graph::SliceFormat::COO, true});
  // Bytes an entry of each single format where sampled (0: not), by format.
  std::array<double, graph::kSliceFormats> sampled{};
  const auto sampled_of = [&](const Single& x) {
    return x.coo_sorted || x.selection ? 0.0 : sampled[static_cast<std::size_t>(x.format)];
  };
  constexpr std::int64_t kSample = std::int64_t{1} << 20;
  if (o.rank_transfers && c.view.a.nnz() > 4 * kSample && singles.size() > 1) {
    std::vector<graph::SliceFormat> formats;
    for (const auto& x : singles) formats.push_back(x.format);
    const auto bytes = sampled_bytes_per_entry(c, formats, kSample);
    for (std::size_t i = 0; i < singles.size(); ++i)
      sampled[static_cast<std::size_t>(singles[i].format)] = bytes[i];
    std::stable_sort(singles.begin(), singles.end(), [&](const Single& x, const Single& y) {
      return sampled_of(x) < sampled_of(y);
    });
  }
  // Slice-GCN's own selection, when the predicted design was a single format: measured last.
  if (!o.selection.empty())
    singles.push_back({graph::SliceFormat::CSR, o.selection_coo_sorted, true});
  const std::size_t ahead = o.ahead > 0 ? o.ahead : designs_ahead(c.view.a.nnz());
  std::vector<std::future<SptvDesign>> built(singles.size());
  std::size_t started = 0;
  const auto spent = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  // A design that could not be built before the budget ends (as long as the selection's took)
  // is not started: an abandoned one would still be waited for.
  const double design_s = s.best.design_s;
  const auto start_upto = [&](std::size_t n) {
    for (; started < std::min(n, singles.size()) && spent() + design_s <= o.budget_s; ++started) {
      std::vector<models::SliceChoice> choices;
      if (singles[started].selection)
        choices = o.selection;
      else
        for (const auto& in : c.inputs)
          choices.push_back({in.slice, static_cast<int>(singles[started].format), "search"});
      built[started] = std::async(std::launch::async, design_sptv, std::cref(c), std::move(choices),
                                  singles[started].coo_sorted);
    }
  };
  // The design's score in ms (lower is better), -1 when it did not run or verify.
  const auto timed = [&](const SptvDesign& d, const std::string& label,
                         const std::function<void()>& on_device) {
    json row = {{"design", label}, {"format_bytes", graph::stored_bytes(d.emitted.format)}};
    // The selection's own slices by format: the report's by_format is the winner's, and when a
    // single format wins it no longer says what the predictor chose.
    if (label == "selected") row["by_format"] = d.slices_by_format();
    json r;
    if (o.run) {
      r = o.run(d, on_device);
    } else if (o.rank_transfers) {
      const SptvGpuInput in{.emitted = d.emitted,
                            .tensor = tensor,
                            .view = c.view,
                            .format_of_slice = d.format_of,
                            .hyb_width = d.hyb_width,
                            .coo_block_nnz = d.coo_block_nnz,
                            .dtype = o.dtype,
                            .max_len = o.max_len,
                            .launch = o.launch,
                            .inputs = &inputs,
                            .on_device = on_device,
                            .optimizer = c.emit.optimizer};
      r = sptv_gpu_runs(in, arch);
    } else {
      r = sptv_device_run(d.emitted, inputs, o.launch, arch, on_device);
    }
    const double pipe_ms =
        r.contains("pipeline") ? r["pipeline"].value("best_measured_ms", 0.0) : 0.0;
    if (!r.value("ran", false) || !r.value("verified", false) ||
        (o.rank_transfers && !(pipe_ms > 0))) {
      row["note"] = r.value("note", std::string("not verified"));
      s.rows.push_back(row);
      return -1.0;
    }
    row["time_ms"] = r["time_ms"]["median"];
    if (o.rank_transfers) row["pipeline_ms"] = pipe_ms;
    s.rows.push_back(row);
    runs = r;
    return o.rank_transfers ? pipe_ms : r["time_ms"]["median"].get<double>();
  };
  double best_ms = timed(s.best, o.first_label, [&] { start_upto(ahead); });
  s.rows.back()["predicted"] = true;  // what --budget 0 emits
  if (best_ms <= 0) return s;  // no GPU, or the first design failed there: nothing to compare
  s.gpu = runs;
  for (std::size_t i = 0; i < singles.size(); ++i) {
    const std::string label =
        singles[i].selection ? std::string("selected")
                             : std::string("all ") + graph::slice_format_name(singles[i].format) +
                                   (singles[i].coo_sorted ? ", column-sorted blocks" : "");
    if (spent() <= o.budget_s) start_upto(i + 1);
    // A design started within the budget is measured even when its run ends past it: its host
    // time is spent either way (an abandoned build is still waited for), and at 10^8 entries the
    // designs built during the selection's runs are the ones the budget can reach at all.
    if (!built[i].valid()) {
      json row = {{"design", label}, {"note", "not measured: budget spent"}};
      if (const double b = sampled_of(singles[i]); b > 0) row["sampled_bytes_per_entry"] = b;
      s.rows.push_back(row);
      continue;
    }
    SptvDesign d = built[i].get();
    const double ms = timed(d, label, [&] { start_upto(i + 1 + ahead); });
    if (const double b = sampled_of(singles[i]); b > 0)
      s.rows.back()["sampled_bytes_per_entry"] = b;
    if (ms > 0 && ms < best_ms) {
      best_ms = ms;
      s.best = std::move(d);
      s.gpu = runs;
    }
  }
  return s;
}

}  // namespace sparsetune::search
