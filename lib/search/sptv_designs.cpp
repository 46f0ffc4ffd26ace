#include "search/sptv_designs.hpp"

#include <chrono>

#include "graph/format.hpp"
#include "search/sptv_gpu.hpp"

namespace sparsetune::search {

using json = nlohmann::json;

SptvDesign design_sptv(const SptvDesignContext& c, std::vector<models::SliceChoice> choices) {
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
  return d;
}

SptvSearch search_sptv_designs(const SptvDesignContext& c, SptvDesign selected,
                               const SparseTensor& tensor, const codegen::PlanInputs& inputs,
                               const SptvSearchOptions& o, std::string* arch) {
  const auto start = std::chrono::steady_clock::now();
  SptvSearch s;
  // The design's score in ms (lower is better), -1 when it did not run or verify.
  json runs;
  const auto timed = [&](const SptvDesign& d, const std::string& label) {
    json row = {{"design", label}, {"format_bytes", graph::stored_bytes(d.emitted.format)}};
    json r;
    if (o.rank_transfers) {
      SptvGpuInput in{d.emitted, tensor,    c.view,   d.format_of, d.hyb_width,
                      o.dtype,   o.max_len, o.launch, &inputs};
      r = sptv_gpu_runs(in, arch);
    } else {
      r = sptv_device_run(d.emitted, inputs, o.launch, arch);
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
  s.best = std::move(selected);
  double best_ms = timed(s.best, "selected");
  if (best_ms <= 0) return s;  // no GPU, or the selection failed there: nothing to compare
  s.gpu = runs;
  const auto selected_count = s.best.count;
  const int slices = static_cast<int>(s.best.choices.size());
  for (auto f : {graph::SliceFormat::CSR, graph::SliceFormat::COO, graph::SliceFormat::ELL,
                 graph::SliceFormat::HYB}) {
    const std::string label = std::string("all ") + graph::slice_format_name(f);
    if (selected_count[static_cast<int>(f)] == slices) continue;  // the selection itself
    const double spent =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (spent > o.budget_s) {
      s.rows.push_back({{"design", label}, {"note", "not measured: budget spent"}});
      continue;
    }
    std::vector<models::SliceChoice> choices;
    for (const auto& in : c.inputs) choices.push_back({in.slice, static_cast<int>(f), "search"});
    SptvDesign d = design_sptv(c, std::move(choices));
    const double ms = timed(d, label);
    if (ms > 0 && ms < best_ms) {
      best_ms = ms;
      s.best = std::move(d);
      s.gpu = runs;
    }
  }
  return s;
}

}  // namespace sparsetune::search
