#include "graph/sptv_graph.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace sparsetune::graph {

namespace {
OpNode node(const char* op, nlohmann::json params = nlohmann::json::object()) {
  return {op, std::move(params), {}};
}

std::vector<OpNode> coo_ops() {
  return {node("COMPRESS"), node("BMT_NNZ_BLOCK", {{"nnz", 4}}), node("THREAD_BITMAP_RED"),
          node("WARP_SEG_RED"), node("GMEM_ATOM_RED")};
}
}  // namespace

const char* slice_format_name(SliceFormat f) {
  static const char* names[] = {"CSR", "COO", "ELL", "HYB", "Dense"};
  return names[static_cast<int>(f)];
}

std::optional<SliceFormat> slice_format_from_name(const std::string& name) {
  for (int i = 0; i < kSliceFormats; ++i)
    if (name == slice_format_name(static_cast<SliceFormat>(i))) return static_cast<SliceFormat>(i);
  return std::nullopt;
}

std::vector<OpNode> slice_format_ops(SliceFormat f, int hyb_width) {
  const nlohmann::json pad = {{"to_max", true}, {"interleave", true}};
  switch (f) {
    case SliceFormat::CSR:
      return {node("COMPRESS"), node("BMT_ROW_BLOCK", {{"rows", 1}}), node("THREAD_TOTAL_RED")};
    case SliceFormat::COO:
      return coo_ops();
    case SliceFormat::ELL:
      return {node("COMPRESS"), node("BMW_ROW_BLOCK", {{"rows", 32}}),
              node("BMT_ROW_BLOCK", {{"rows", 1}}), node("BMT_PAD", pad), node("THREAD_TOTAL_RED")};
    case SliceFormat::HYB: {
      OpNode split = node("HYB_SPLIT", {{"width", hyb_width}});
      split.branches = {{node("COMPRESS"), node("BMT_ROW_BLOCK", {{"rows", 1}}),
                         node("BMT_PAD", pad), node("THREAD_TOTAL_RED")},
                        coo_ops()};
      return {split};
    }
    case SliceFormat::Dense:
      return {node("DENSE_FILL"), node("COMPRESS"), node("BMT_ROW_BLOCK", {{"rows", 1}}),
              node("BMT_PAD", pad), node("THREAD_TOTAL_RED")};
  }
  throw Error("unknown slice format");
}

Graph sptv_graph(const std::vector<SliceFormat>& format_of_slice, const std::vector<bool>& nonempty,
                 int hyb_width) {
  if (format_of_slice.size() != nonempty.size())
    throw Error("sptv graph: one format per slice expected");
  std::vector<int> part_of(kSliceFormats, -1);
  for (std::size_t s = 0; s < format_of_slice.size(); ++s)
    if (nonempty[s]) part_of[static_cast<int>(format_of_slice[s])] = 0;
  Graph g;
  g.name = "htf";
  g.op = "sptv";
  OpNode div = node("SLICE_DIV");
  int parts = 0;
  for (int f = 0; f < kSliceFormats; ++f)
    if (part_of[f] == 0) {
      part_of[f] = parts++;
      div.branches.push_back(slice_format_ops(static_cast<SliceFormat>(f), hyb_width));
    }
  if (parts == 0) {  // no entries at all: one CSR part holds the (empty) view
    part_of[0] = parts++;
    div.branches.push_back(slice_format_ops(SliceFormat::CSR, hyb_width));
  }
  nlohmann::json assign = nlohmann::json::array();
  for (std::size_t s = 0; s < format_of_slice.size(); ++s) {
    const int p = part_of[static_cast<int>(format_of_slice[s])];
    assign.push_back(nonempty[s] && p >= 0 ? p : 0);
  }
  div.params = {{"count", parts}, {"assign", assign}};
  g.ops.push_back(std::move(div));
  validate(g, "sptv graph");
  return g;
}

BatchedGraph sptv_batched_graph(const std::vector<SliceFormat>& format_of_slice,
                                const std::vector<std::int64_t>& slice_nnz, int hyb_width,
                                int batches) {
  if (format_of_slice.size() != slice_nnz.size())
    throw Error("sptv graph: one format and one entry count per slice expected");
  if (batches < 1) throw Error("sptv graph: at least one batch per format");
  BatchedGraph out;
  out.branches.resize(kSliceFormats);
  std::vector<std::int64_t> part_of_slice(format_of_slice.size(), 0);
  OpNode div = node("SLICE_DIV");
  int parts = 0;
  for (int f = 0; f < kSliceFormats; ++f) {
    std::int64_t total = 0, count = 0;
    for (std::size_t s = 0; s < slice_nnz.size(); ++s)
      if (static_cast<int>(format_of_slice[s]) == f && slice_nnz[s] > 0)
        total += slice_nnz[s], ++count;
    if (total == 0) continue;
    // k runs: a slice opens the next run when the entries before it pass that run's share, or
    // when every remaining slice must open one for the runs to number k.
    const std::int64_t k = std::min<std::int64_t>(batches, count);
    std::int64_t seen = 0, batch = -1, index = 0;
    for (std::size_t s = 0; s < slice_nnz.size(); ++s) {
      if (static_cast<int>(format_of_slice[s]) != f || slice_nnz[s] == 0) continue;
      const std::int64_t wanted = std::min(k - 1, seen * k / total);
      if (batch < 0 || wanted > batch || count - index == k - (batch + 1)) {
        ++batch;
        out.branches[f].push_back(parts++);
        div.branches.push_back(slice_format_ops(static_cast<SliceFormat>(f), hyb_width));
      }
      part_of_slice[s] = out.branches[f].back();
      seen += slice_nnz[s];
      ++index;
    }
  }
  if (parts == 0) {  // no entries at all: one CSR part holds the (empty) view
    out.branches[0].push_back(parts++);
    div.branches.push_back(slice_format_ops(SliceFormat::CSR, hyb_width));
  }
  nlohmann::json assign = nlohmann::json::array();
  for (auto p : part_of_slice) assign.push_back(p);
  div.params = {{"count", parts}, {"assign", assign}};
  out.graph.name = "htf-batched";
  out.graph.op = "sptv";
  out.graph.ops.push_back(std::move(div));
  validate(out.graph, "sptv batched graph");
  return out;
}

std::vector<std::int64_t> slice_entries(const SptvMatrix& m) {
  std::vector<std::int64_t> n(m.slices, 0);
  for (std::int64_t r = 0; r < m.a.rows; ++r) n[m.row_slice[r]] += m.a.row_length(r);
  return n;
}

std::vector<bool> nonempty_slices(const SptvMatrix& m) {
  std::vector<bool> v(m.slices, false);
  for (auto s : m.row_slice) v[s] = true;
  return v;
}

DesignOptions sptv_design_options(const SptvMatrix& m, const std::string& dtype) {
  DesignOptions o;
  o.dtype = dtype;
  auto sl = std::make_shared<RowSlices>();
  sl->of_row = m.row_slice;
  sl->count = m.slices;
  o.slices = std::move(sl);
  return o;
}

SptvSlices sptv_slices(const SptvMatrix& m, const std::vector<SliceFormat>& format_of_slice) {
  const auto table = slice_table(m);
  SptvSlices s;
  s.dims = m.dims;
  s.mode = m.mode;
  s.slice_mode = m.slice_mode;
  s.slice_idx = table.index;
  s.slice_nnz = table.nnz;
  for (auto i : table.index) s.slice_format.push_back(static_cast<int>(format_of_slice.at(i)));
  return s;
}

}  // namespace sparsetune::graph
