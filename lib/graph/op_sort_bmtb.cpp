// SORT_BMTB: sort the rows of each thread block by decreasing length (less padding later).
#include <algorithm>
#include <numeric>

#include "graph/op_util.hpp"

namespace sparsetune::graph {

class SortBmtb final : public Operator {
 public:
  const char* name() const override { return "SORT_BMTB"; }
  Stage stage() const override { return Stage::Mapping; }
  const char* summary() const override {
    return "Sort the rows inside each BMTB by decreasing non-zero count";
  }
  std::string precondition(const GraphState& s, const nlohmann::json&) const override {
    if (auto r = mapping_rule(s); !r.empty()) return r;
    if (!s.blocked[0] || s.bmtb_kind != "ROW") return "SORT_BMTB needs BMTB_ROW_BLOCK before it";
    if (s.finest > 0) return "SORT_BMTB comes before finer levels are cut";
    if (s.padded[0]) return "SORT_BMTB comes before BMTB_PAD";
    if (s.col_sorted) return "SORT_BMTB comes before BMTB_COL_SORT";
    return "";
  }
  void advance(GraphState&, const nlohmann::json&) const override {}
  std::vector<Part> apply(Part& part, const nlohmann::json&) const override {
    std::vector<Entry> nz;
    nz.reserve(part.nz.size());
    std::vector<std::int64_t> origin = part.origin_row;
    for (auto& b : part.blocks[0]) {
      // Row r of the block: entries [start[r], start[r] + len[r]) of the old stream.
      const std::int64_t n = b.row_hi - b.row_lo + 1;
      std::vector<std::int64_t> start(n, b.begin), len(n, 0);
      for (std::int64_t k = b.begin; k < b.end; ++k) {
        const auto r = part.nz[k].row - b.row_lo;
        if (len[r] == 0) start[r] = k;
        ++len[r];
      }
      std::vector<std::int64_t> order(n);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](std::int64_t x, std::int64_t y) { return len[x] > len[y]; });
      const std::int64_t begin = static_cast<std::int64_t>(nz.size());
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t r = order[i];
        origin[b.row_lo + i] = part.origin_row[b.row_lo + r];
        for (std::int64_t k = 0; k < len[r]; ++k) {
          Entry e = part.nz[start[r] + k];
          e.row = b.row_lo + i;
          nz.push_back(e);
        }
      }
      b.begin = b.first = begin;
      b.end = static_cast<std::int64_t>(nz.size());
    }
    part.nz = std::move(nz);
    part.origin_row = std::move(origin);
    return {};
  }
};

const Operator* make_sort_bmtb() {
  static SortBmtb op;
  return &op;
}

}  // namespace sparsetune::graph
