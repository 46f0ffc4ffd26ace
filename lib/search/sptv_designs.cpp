#include "search/sptv_designs.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <future>

#include "core/memory.hpp"
#include "core/parallel_for.hpp"
#include "graph/format.hpp"
#include "search/sptv_gpu.hpp"

namespace sparsetune::search {

using json = nlohmann::json;

SptvDesign design_sptv(const SptvDesignContext& c, std::vector<models::SliceChoice> choices) {
  const auto t0 = std::chrono::steady_clock::now();
  SptvDesign d;
  d.choices = std::move(choices);
  d.format_of.assign(c.view.slices, graph::SliceFormat::CSR);
  d.count.assign(graph::kSliceFormats, 0);
  std::vector<features::SliceInput> hyb;
  for (std::size_t i = 0; i < d.choices.size(); ++i) {
    d.format_of[d.choices[i].slice] = static_cast<graph::SliceFormat>(d.choices[i].format);
    ++d.count[d.choices[i].format];
    if (d.choices[i].format == static_cast<int>(graph::SliceFormat::HYB))
      hyb.push_back(c.inputs[i]);
  }
  d.hyb_width = c.hyb_width > 0 ? c.hyb_width : models::hyb_width(hyb);
  d.graph = c.batches == 1
                ? graph::sptv_graph(d.format_of, c.stats, d.hyb_width)
                : graph::sptv_batched_graph(d.format_of, c.stats, d.hyb_width, c.batches).graph;
  d.graph.name = c.name;
  auto opt = c.emit;
  opt.sptv = graph::sptv_slices(c.view, d.format_of);
  d.emitted = codegen::generate(d.graph, c.view.a, opt);
  d.design_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return d;
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

SptvSearch search_sptv_designs(const SptvDesignContext& c, SptvDesign selected,
                               const SparseTensor& tensor, const codegen::PlanInputs& inputs,
                               const SptvSearchOptions& o, std::string* arch) {
  const auto start = std::chrono::steady_clock::now();
  SptvSearch s;
  s.best = std::move(selected);
  json runs;
  // The single formats to try (not the selection itself), each designed on a host thread ahead of
  // its GPU runs, which stay one at a time: up to designs_ahead() at once, the first ones as soon
  // as the selection's run has found a device, the next when one is taken.
  std::vector<graph::SliceFormat> singles;
  for (auto f : {graph::SliceFormat::CSR, graph::SliceFormat::COO, graph::SliceFormat::ELL,
                 graph::SliceFormat::HYB})
    if (s.best.count[static_cast<int>(f)] != static_cast<int>(s.best.choices.size()))
      singles.push_back(f);
  const std::size_t ahead = designs_ahead(c.view.a.nnz());
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
      for (const auto& in : c.inputs)
        choices.push_back({in.slice, static_cast<int>(singles[started]), "search"});
      built[started] =
          std::async(std::launch::async, design_sptv, std::cref(c), std::move(choices));
    }
  };
  // The design's score in ms (lower is better), -1 when it did not run or verify.
  const auto timed = [&](const SptvDesign& d, const std::string& label,
                         const std::function<void()>& on_device) {
    json row = {{"design", label}, {"format_bytes", graph::stored_bytes(d.emitted.format)}};
    json r;
    if (o.rank_transfers) {
      SptvGpuInput in{d.emitted, tensor,    c.view,   d.format_of, d.hyb_width,
                      o.dtype,   o.max_len, o.launch, &inputs};
      in.on_device = on_device;
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
  double best_ms = timed(s.best, "selected", [&] { start_upto(ahead); });
  if (best_ms <= 0) return s;  // no GPU, or the selection failed there: nothing to compare
  s.gpu = runs;
  for (std::size_t i = 0; i < singles.size(); ++i) {
    const std::string label = std::string("all ") + graph::slice_format_name(singles[i]);
    if (spent() <= o.budget_s) start_upto(i + 1);
    if (spent() > o.budget_s || !built[i].valid()) {
      s.rows.push_back({{"design", label}, {"note", "not measured: budget spent"}});
      continue;
    }
    SptvDesign d = built[i].get();
    const double ms = timed(d, label, [&] { start_upto(i + 1 + ahead); });
    if (ms > 0 && ms < best_ms) {
      best_ms = ms;
      s.best = std::move(d);
      s.gpu = runs;
    }
  }
  return s;
}

}  // namespace sparsetune::search
