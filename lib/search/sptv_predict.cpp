#include "search/sptv_predict.hpp"

#include <algorithm>

#include "graph/format.hpp"
#include "graph/sptv_graph.hpp"

namespace sparsetune::search {

using json = nlohmann::json;

std::vector<models::SliceChoice> SptvPrediction::choices() const {
  std::vector<models::SliceChoice> out;
  if (format < 0) return out;
  for (const auto slice : slices) out.push_back({slice, format, "fewest bytes"});
  return out;
}

SptvPrediction predict_sptv_design(const SptvDesignContext& c, const SptvDesign& selected,
                                   const SptvPredictOptions& o) {
  SptvPrediction p;
  p.design = "selected";
  for (const auto& in : c.inputs) p.slices.push_back(in.slice);
  const std::int64_t nnz = c.view.a.nnz();
  const auto per_entry = [nnz](const SptvDesign& d) {
    return nnz > 0 ? static_cast<double>(graph::stored_bytes(d.emitted.format)) /
                         static_cast<double>(nnz)
                   : 0.0;
  };
  const double selected_bytes = per_entry(selected);
  p.candidates.push_back({{"design", "selected"},
                          {"bytes_per_entry", selected_bytes},
                          {"by_format", selected.slices_by_format()}});
  std::vector<graph::SliceFormat> single;
  for (auto f : kSingleSliceFormats)
    if (!selected.all_in(f)) single.push_back(f);
  auto bytes = nnz > 0 && !single.empty() ? sampled_bytes_per_entry(c, single, o.sample_nnz)
                                          : std::vector<double>(single.size(), 0.0);
  std::vector<bool> sampled(single.size(), nnz > o.sample_nnz);
  // Candidates closer than a sample sizes them are designed whole: a close contest is decided by
  // the whole view's bytes.
  if (nnz > o.sample_nnz && o.whole_within > 0 && !single.empty()) {
    const double lo = std::min(selected_bytes, *std::min_element(bytes.begin(), bytes.end()));
    const double near = lo * (1 + o.whole_within);
    std::vector<std::size_t> close;
    for (std::size_t i = 0; i < single.size(); ++i)
      if (bytes[i] <= near) close.push_back(i);
    if (close.size() + (selected_bytes <= near ? 1 : 0) >= 2)
      for (const std::size_t i : close) {
        std::vector<models::SliceChoice> choices;
        for (const auto slice : p.slices)
          choices.push_back({slice, static_cast<int>(single[i]), "fewest bytes"});
        auto d = design_sptv(c, std::move(choices));
        bytes[i] = per_entry(d);
        sampled[i] = false;
        // The fewest so far kept: tune emits it without designing it again.
        if (!p.whole || bytes[i] < per_entry(*p.whole)) p.whole = std::move(d);
      }
  }
  double best = selected_bytes;
  std::size_t picked = 0;  // 0: the selection, else single[picked - 1]
  for (std::size_t i = 0; i < single.size(); ++i) {
    p.candidates.push_back({{"design", std::string("all ") + graph::slice_format_name(single[i])},
                            {"bytes_per_entry", bytes[i]},
                            {"sampled", static_cast<bool>(sampled[i])}});
    if (nnz > 0 && bytes[i] < best) {
      best = bytes[i];
      picked = i + 1;
    }
  }
  for (std::size_t i = 0; i < p.candidates.size(); ++i) p.candidates[i]["picked"] = i == picked;
  if (picked > 0) {
    p.format = static_cast<int>(single[picked - 1]);
    p.design = p.candidates[picked]["design"].get<std::string>();
  } else if (selected.all_in(graph::SliceFormat::COO) && !selected.choices.empty()) {
    p.format = static_cast<int>(graph::SliceFormat::COO);  // a selection of COO alone
    p.design = "all COO";
  }
  if (p.format == static_cast<int>(graph::SliceFormat::COO) && o.by_kernels &&
      nnz >= o.sorted_coo_from) {
    p.coo_sorted = true;
    p.design = "all COO, column-sorted blocks";
  } else if (picked == 0) {
    p.format = -1;  // the selection itself
    p.design = "selected";
  }
  // The whole design kept is the predicted one only if it holds that format as designed (COO's
  // atomic form).
  if (p.whole &&
      (p.format < 0 || p.coo_sorted || !p.whole->all_in(static_cast<graph::SliceFormat>(p.format))))
    p.whole.reset();
  return p;
}

}  // namespace sparsetune::search
