#include "graph/sptv_graph.hpp"

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
