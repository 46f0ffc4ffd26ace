// BMTB_COL_SORT: order each thread block's entries by column (rows stay its own). Its threads then
// read x in one sweep, each column's sector once for all its rows, instead of gathering x at
// random row by row: where x is larger than L1 (an SpTV mode of 10^5 columns), the gather's
// sectors, not DRAM, set the time. The rows' results no longer arrive in order, so they gather in
// shared memory (SHMEM_OFFSET_RED) or in y (GMEM_ATOM_RED), after a thread-level reduction that
// follows each entry's row (THREAD_BITMAP_RED's signed row steps, or one entry a thread).
#include <algorithm>

#include "core/parallel_for.hpp"
#include "graph/op_util.hpp"

namespace sparsetune::graph {

class BmtbColSort final : public Operator {
 public:
  const char* name() const override { return "BMTB_COL_SORT"; }
  Stage stage() const override { return Stage::Mapping; }
  const char* summary() const override {
    return "Order each BMTB's entries by column, so its threads sweep x once (SpMV, SpTV)";
  }
  std::vector<std::string> ops() const override { return {"spmv", "sptv"}; }
  std::string precondition(const GraphState& s, const nlohmann::json&) const override {
    if (auto r = mapping_rule(s); !r.empty()) return r;
    if (!s.blocked[0]) return "BMTB_COL_SORT needs a BMTB_*_BLOCK before it";
    if (s.finest > 0) return "BMTB_COL_SORT comes before finer levels are cut";
    if (s.padded[0]) return "BMTB_COL_SORT comes before BMTB_PAD";
    if (s.col_sorted) return "BMTB_COL_SORT appears once per part";
    if (s.tc_width) return "a part stored by TC_COMPRESS keeps its TC blocks' order";
    return "";
  }
  void advance(GraphState& s, const nlohmann::json&) const override { s.col_sorted = true; }
  std::vector<Part> apply(Part& part, const nlohmann::json&) const override {
    auto& blocks = part.blocks[0];
    const auto by_col = [](const Entry& a, const Entry& b) { return a.col < b.col; };
    parallel_for(static_cast<int>(std::min<std::size_t>(blocks.size(), 1 << 16)), all_cores(),
                 [&](int t) {
                   for (std::size_t i = t; i < blocks.size(); i += 1 << 16)
                     std::stable_sort(part.nz.begin() + blocks[i].begin,
                                      part.nz.begin() + blocks[i].end, by_col);
                 });
    part.col_sorted = true;
    return {};
  }
};

const Operator* make_bmtb_col_sort() {
  static BmtbColSort op;
  return &op;
}

}  // namespace sparsetune::graph
