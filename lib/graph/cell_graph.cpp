#include "graph/cell_graph.hpp"

#include <algorithm>
#include <string>

#include "core/cell.hpp"
#include "core/error.hpp"

namespace sparsetune::graph {

namespace {

using nlohmann::json;

OpNode col_tile(const CellGraphOptions& o) {
  json p = {{"tn", o.tn}, {"vec", o.vec}};
  if (o.lanes > 1) p["lanes"] = o.lanes;
  return {"COL_TILE", p, {}};
}

std::vector<OpNode> ell_bucket(std::int64_t w, std::int64_t slots, const CellGraphOptions& o) {
  return {{"COMPRESS", json::object(), {}},
          col_tile(o),
          {"BMTB_ROW_BLOCK", {{"rows", std::max<std::int64_t>(1, slots / w)}}, {}},
          {"BMT_ROW_BLOCK", {{"rows", 1}}, {}},
          {"BMT_PAD", {{"multiple", w}, {"to_max", true}, {"interleave", true}}, {}},
          {"SET_RESOURCES", {{"threads", o.threads}}, {}},
          {"THREAD_TOTAL_RED", json::object(), {}}};
}

std::vector<OpNode> folded_bucket(std::int64_t wmax, const CellGraphOptions& o) {
  std::vector<OpNode> ops;
  ops.push_back({"COMPRESS", json::object(), {}});
  ops.push_back(col_tile(o));
  ops.push_back({"BMTB_ROW_BLOCK", {{"rows", 1}}, {}});   // a thread block per long row
  ops.push_back({"BMT_NNZ_BLOCK", {{"nnz", wmax}}, {}});  // its pieces of W_max
  ops.push_back({"BMT_PAD", {{"multiple", wmax}}, {}});
  ops.push_back({"SET_RESOURCES", {{"threads", o.threads}}, {}});
  ops.push_back({"THREAD_TOTAL_RED", json::object(), {}});
  ops.push_back({"GMEM_ATOM_RED", json::object(), {}});
  return ops;
}

bool power_of_two(std::int64_t v) { return v >= 1 && (v & (v - 1)) == 0; }

}  // namespace

Graph cell_graph(const std::vector<std::int64_t>& max_width, const CellGraphOptions& o) {
  if (max_width.empty() || static_cast<int>(max_width.size()) != o.partitions)
    throw Error("cell graph: one W_max per partition (" + std::to_string(o.partitions) + ")");
  if (!power_of_two(o.block_factor))
    throw Error("cell graph: block_factor must be a power of two, not " +
                std::to_string(o.block_factor));
  Graph g;
  g.name = "cell";
  g.op = "spmm";
  OpNode div{"COL_DIV", {{"count", o.partitions}}, {}};
  for (const auto wmax : max_width) {
    if (!power_of_two(wmax) || wmax > (std::int64_t{1} << 20))
      throw Error("cell graph: W_max must be a power of two up to 2^20, not " +
                  std::to_string(wmax));
    // Bucket i holds rows of 2^(i-1) < l <= 2^i (bucket 0 also the empty ones); longer: folded.
    json bounds = json::array();
    for (std::int64_t w = 1; w <= wmax; w *= 2) bounds.push_back(w + 1);
    OpNode bin{"BIN", {{"bounds", bounds}}, {}};
    const std::int64_t slots = wmax * o.block_factor;
    for (std::int64_t w = 1; w <= wmax; w *= 2) bin.branches.push_back(ell_bucket(w, slots, o));
    bin.branches.push_back(folded_bucket(wmax, o));
    div.branches.push_back({std::move(bin)});
  }
  g.ops = {std::move(div)};
  validate(g, "cell graph");
  return g;
}

Graph cell_graph(const Csr64& a, std::int64_t n, const CellGraphOptions& o) {
  const cell::Cell c = cell::build_tuned(a, o.partitions, n, o.block_factor);
  std::vector<std::int64_t> widths;
  for (const auto& p : c.parts) widths.push_back(p.max_width);
  return cell_graph(widths, o);
}

}  // namespace sparsetune::graph
