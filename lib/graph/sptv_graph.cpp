#include "graph/sptv_graph.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "graph/slice_assignment.hpp"

namespace sparsetune::graph {

namespace {
OpNode node(const char* op, nlohmann::json params = nlohmann::json::object()) {
  return {op, std::move(params), {}};
}

std::vector<OpNode> coo_ops() {
  return {node("COMPRESS"), node("BMT_NNZ_BLOCK", {{"nnz", 4}}), node("THREAD_BITMAP_RED"),
          node("WARP_SEG_RED"), node("GMEM_ATOM_RED")};
}

// HYB's ELL part at H = 1: each fiber holds one entry there, so runs of 4 entries a thread
// (interleaved within a warp's 128: coalesced, and a thread's next fiber 32 rows on, a step its
// column word holds) are 4 fibers, finished inside the thread and stored once each.
std::vector<OpNode> one_entry_ops() {
  return {node("COMPRESS"), node("BMW_NNZ_BLOCK", {{"nnz", 128}}),
          node("BMT_NNZ_BLOCK", {{"nnz", 4}, {"interleave", true}}),
          node("SET_RESOURCES", {{"threads", 256}}), node("THREAD_BITMAP_RED", {{"loads", 4}})};
}

std::vector<OpNode> sorted_coo_ops(int block_nnz) {
  return {node("COMPRESS"),
          node("BMTB_ROW_BLOCK", {{"max_nnz", block_nnz}, {"max_rows", 4096}}),
          node("BMTB_COL_SORT"),
          node("BMT_NNZ_BLOCK", {{"nnz", 4}, {"interleave", true}}),
          node("SET_RESOURCES", {{"threads", 512}}),
          node("THREAD_BITMAP_RED", {{"loads", 4}}),
          node("SHMEM_OFFSET_RED", {{"max_rows", 4096}})};
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

int slice_lanes(double mean_fiber) {
  if (!(mean_fiber >= 2.0)) return 1;
  int g = 2;
  while (g < 32 && 2.0 * g <= mean_fiber) g *= 2;
  return g;
}

namespace {
// G lanes per row, coalesced: strided lanes (CSR, Dense) or runs padded and stored column-major
// (ELL); WARP_BITMAP_RED sums each group of G lanes, as every round holds 32 / G whole rows.
std::vector<OpNode> vector_ops(int lanes, bool padded) {
  const nlohmann::json pad = {{"to_max", true}, {"interleave", true}};
  std::vector<OpNode> ops = {node("COMPRESS")};
  if (lanes <= 1) {
    if (padded) ops.push_back(node("BMW_ROW_BLOCK", {{"rows", 32}}));
    ops.push_back(node("BMT_ROW_BLOCK", {{"rows", 1}}));
    if (padded) ops.push_back(node("BMT_PAD", pad));
    ops.push_back(node("THREAD_TOTAL_RED"));
    return ops;
  }
  ops.push_back(node("BMW_ROW_BLOCK", {{"rows", 32 / lanes}}));
  // A warp per row without padding: the threads are implied (strided, derived by the Optimizer).
  if (padded || lanes < 32)
    ops.push_back(node("BMT_ROW_BLOCK", {{"rows", 1}, {"lanes", lanes}, {"interleave", !padded}}));
  if (padded) ops.push_back(node("BMT_PAD", pad));
  ops.push_back(node("THREAD_TOTAL_RED"));
  ops.push_back(node(lanes == 32 ? "WARP_TOTAL_RED" : "WARP_BITMAP_RED"));
  return ops;
}

int pow2_lanes(int lanes) {
  if (lanes < 1 || lanes > 32 || (lanes & (lanes - 1)) != 0)
    throw Error("sptv graph: lanes per fiber must be a power of two from 1 to 32, not " +
                std::to_string(lanes));
  return lanes;
}
}  // namespace

int sorted_coo_block_nnz(std::int64_t part_nnz) {
  int e = 4096;
  while (e < 65536 && std::int64_t{2} * e * 1024 <= part_nnz) e *= 2;
  return e;
}

std::vector<OpNode> slice_format_ops(SliceFormat f, int hyb_width, int lanes, int coo_block_nnz) {
  lanes = pow2_lanes(lanes);
  switch (f) {
    case SliceFormat::CSR:
      return vector_ops(lanes, false);
    case SliceFormat::COO:
      if (coo_block_nnz < 0)
        throw Error("sptv graph: the column-sorted COO's block size is chosen per part");
      return coo_block_nnz > 0 ? sorted_coo_ops(coo_block_nnz) : coo_ops();
    case SliceFormat::ELL:
      return vector_ops(lanes, true);
    case SliceFormat::HYB: {
      OpNode split = node("HYB_SPLIT", {{"width", hyb_width}});
      split.branches = {hyb_width == 1 ? one_entry_ops() : vector_ops(lanes, true), coo_ops()};
      return {split};
    }
    case SliceFormat::Dense: {
      auto ops = vector_ops(lanes, false);
      ops.insert(ops.begin(), node("DENSE_FILL"));
      return ops;
    }
  }
  throw Error("unknown slice format");
}

int hyb_width(const SptvMatrix& m, const std::vector<char>& hyb_slice) {
  std::vector<std::int64_t> reach;  // reach[k]: marked fibers of exactly k + 1 entries (first)
  std::int64_t fibers = 0;
  for (std::int64_t r = 0; r < m.a.rows; ++r) {
    const auto sl = m.row_slice[static_cast<std::size_t>(r)];
    if (sl < 0 || sl >= static_cast<std::int64_t>(hyb_slice.size()) ||
        !hyb_slice[static_cast<std::size_t>(sl)])
      continue;
    const auto len = m.a.row_ptr[r + 1] - m.a.row_ptr[r];
    if (len <= 0) continue;
    ++fibers;
    if (static_cast<std::int64_t>(reach.size()) < len) reach.resize(len, 0);
    ++reach[static_cast<std::size_t>(len - 1)];
  }
  // Suffix sums: reach[k] becomes the fibers of k + 1 entries or more.
  for (std::size_t k = reach.size(); k-- > 1;) reach[k - 1] += reach[k];
  int h = 1;
  for (std::size_t k = 1; k < reach.size(); ++k)
    if (3 * reach[k] >= fibers) h = static_cast<int>(k + 1);
  return h;
}

SliceStats slice_stats(const SptvMatrix& m) {
  SliceStats s;
  s.nnz = slice_entries(m);
  s.fibers.assign(m.slices, 0);
  for (auto sl : m.row_slice) ++s.fibers[sl];
  s.width = m.a.cols;
  return s;
}

int part_lanes(SliceFormat f, const SliceStats& s, const std::vector<std::int64_t>& slices,
               int hyb_width) {
  if (f == SliceFormat::COO) return 1;
  std::int64_t nnz = 0, fibers = 0;
  for (auto sl : slices) nnz += s.nnz.at(sl), fibers += s.fibers.at(sl);
  if (fibers == 0) return 1;
  double mean = static_cast<double>(nnz) / static_cast<double>(fibers);
  if (f == SliceFormat::HYB) mean = std::min(mean, static_cast<double>(hyb_width));
  if (f == SliceFormat::Dense) mean = static_cast<double>(s.width);
  return slice_lanes(mean);
}

namespace {
int part_block_nnz(int coo_block_nnz, const SliceStats& s,
                   const std::vector<std::int64_t>& slices) {
  if (coo_block_nnz != kSortedCooAuto) return coo_block_nnz;
  std::int64_t nnz = 0;
  for (auto sl : slices) nnz += s.nnz.at(sl);
  return sorted_coo_block_nnz(nnz);
}
}  // namespace

Graph sptv_graph(const std::vector<SliceFormat>& format_of_slice, const SliceStats& stats,
                 int hyb_width, int coo_block_nnz) {
  if (format_of_slice.size() != stats.nnz.size() || stats.fibers.size() != stats.nnz.size())
    throw Error("sptv graph: one format per slice expected");
  std::vector<std::vector<std::int64_t>> slices_of(kSliceFormats);
  for (std::size_t s = 0; s < format_of_slice.size(); ++s)
    if (stats.nnz[s] > 0 || stats.fibers[s] > 0)
      slices_of[static_cast<int>(format_of_slice[s])].push_back(static_cast<std::int64_t>(s));
  std::vector<int> part_of(kSliceFormats, -1);
  Graph g;
  g.name = "htf";
  g.op = "sptv";
  OpNode div = node("SLICE_DIV");
  int parts = 0;
  for (int f = 0; f < kSliceFormats; ++f)
    if (!slices_of[f].empty()) {
      const auto fmt = static_cast<SliceFormat>(f);
      part_of[f] = parts++;
      div.branches.push_back(slice_format_ops(fmt, hyb_width,
                                              part_lanes(fmt, stats, slices_of[f], hyb_width),
                                              part_block_nnz(coo_block_nnz, stats, slices_of[f])));
    }
  if (parts == 0) {  // no entries at all: one CSR part holds the (empty) view
    part_of[0] = parts++;
    div.branches.push_back(slice_format_ops(SliceFormat::CSR, hyb_width));
  }
  std::vector<std::int64_t> assign(format_of_slice.size());
  for (std::size_t s = 0; s < format_of_slice.size(); ++s) {
    const int p = part_of[static_cast<int>(format_of_slice[s])];
    assign[s] = p >= 0 ? p : 0;
  }
  div.params = {{"count", parts}};
  set_slice_assignment(div.params, assign);
  g.ops.push_back(std::move(div));
  validate(g, "sptv graph");
  return g;
}

BatchedGraph sptv_batched_graph(const std::vector<SliceFormat>& format_of_slice,
                                const SliceStats& stats, int hyb_width, int batches,
                                int coo_block_nnz) {
  const auto& slice_nnz = stats.nnz;
  if (format_of_slice.size() != slice_nnz.size() || stats.fibers.size() != slice_nnz.size())
    throw Error("sptv graph: one format and one entry count per slice expected");
  if (batches < 1) throw Error("sptv graph: at least one batch per format");
  BatchedGraph out;
  out.branches.resize(kSliceFormats);
  std::vector<std::int64_t> part_of_slice(format_of_slice.size(), 0);
  std::vector<std::vector<std::int64_t>> slices_of_part;
  std::vector<SliceFormat> format_of_part;
  for (int f = 0; f < kSliceFormats; ++f) {
    std::int64_t total = 0, count = 0;
    for (std::size_t s = 0; s < slice_nnz.size(); ++s)
      if (static_cast<int>(format_of_slice[s]) == f && slice_nnz[s] > 0)
        total += slice_nnz[s], ++count;
    if (total == 0) continue;
    // k runs: a slice opens the next run when the entries before it pass that run's share, or
    // when every remaining slice must open one for the runs to number k.
    const std::int64_t k = std::min<std::int64_t>(batches, count);
    std::vector<std::vector<std::int64_t>> runs;
    std::vector<std::int64_t> run_nnz;
    std::int64_t seen = 0, index = 0;
    for (std::size_t s = 0; s < slice_nnz.size(); ++s) {
      if (static_cast<int>(format_of_slice[s]) != f || slice_nnz[s] == 0) continue;
      const auto batch = static_cast<std::int64_t>(runs.size()) - 1;
      const std::int64_t wanted = std::min(k - 1, seen * k / total);
      if (batch < 0 || wanted > batch || count - index == k - (batch + 1))
        runs.emplace_back(), run_nnz.push_back(0);
      runs.back().push_back(static_cast<std::int64_t>(s));
      run_nnz.back() += slice_nnz[s];
      seen += slice_nnz[s];
      ++index;
    }
    // The order the runs go in (the stream batches' order): the smallest first, then the others
    // largest first. A slice is never cut, so skewed slices make some runs much larger than the
    // share; the first copy overlaps nothing and the last run's kernels and y overlap nothing,
    // so both ends get small runs.
    std::vector<std::size_t> order(runs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return run_nnz[a] > run_nnz[b]; });
    if (order.size() > 1) std::rotate(order.rbegin(), order.rbegin() + 1, order.rend());
    for (auto r : order) {
      out.branches[f].push_back(static_cast<int>(slices_of_part.size()));
      for (auto s : runs[r]) part_of_slice[s] = out.branches[f].back();
      slices_of_part.push_back(std::move(runs[r]));
      format_of_part.push_back(static_cast<SliceFormat>(f));
    }
  }
  OpNode div = node("SLICE_DIV");
  for (std::size_t p = 0; p < slices_of_part.size(); ++p)
    div.branches.push_back(
        slice_format_ops(format_of_part[p], hyb_width,
                         part_lanes(format_of_part[p], stats, slices_of_part[p], hyb_width),
                         part_block_nnz(coo_block_nnz, stats, slices_of_part[p])));
  int parts = static_cast<int>(slices_of_part.size());
  if (parts == 0) {  // no entries at all: one CSR part holds the (empty) view
    out.branches[0].push_back(parts++);
    div.branches.push_back(slice_format_ops(SliceFormat::CSR, hyb_width));
  }
  div.params = {{"count", parts}};
  set_slice_assignment(div.params, part_of_slice);
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
  s.y_order = sptv_output_order(static_cast<int>(m.dims.size()), m.mode, m.slice_mode);
  s.slice_idx = table.index;
  s.slice_nnz = table.nnz;
  for (auto i : table.index) s.slice_format.push_back(static_cast<int>(format_of_slice.at(i)));
  return s;
}

}  // namespace sparsetune::graph
