// SORT and SORT_SUB: reorder rows by decreasing length, over the whole part or within windows.
#include <algorithm>
#include <numeric>

#include "graph/op_util.hpp"

namespace sparsetune::graph {

namespace {
// Stable sort of local rows [lo, hi) by decreasing length; origin_row moves with its row.
void sort_rows(Part& p, std::int64_t lo, std::int64_t hi) {
  std::vector<std::int64_t> order(hi - lo);
  std::iota(order.begin(), order.end(), lo);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return p.row_entries[a].size() > p.row_entries[b].size();
  });
  reorder_rows(p, lo, order);
}
}  // namespace

class Sort final : public Operator {
 public:
  const char* name() const override { return "SORT"; }
  Stage stage() const override { return Stage::Converting; }
  const char* summary() const override { return "Sort rows by decreasing non-zero count"; }
  std::string precondition(const GraphState& s, const nlohmann::json&) const override {
    return converting_rule(s);
  }
  void advance(GraphState&, const nlohmann::json&) const override {}
  std::vector<Part> apply(Part& part, const nlohmann::json&) const override {
    sort_rows(part, 0, part.rows());
    return {};
  }
};

class SortSub final : public Operator {
 public:
  const char* name() const override { return "SORT_SUB"; }
  Stage stage() const override { return Stage::Converting; }
  const char* summary() const override {
    return "Sort rows by decreasing non-zero count within windows of `window` rows";
  }
  std::vector<ParamSpec> params() const override {
    return {{"window", ParamType::Int, 256, 1, 1 << 30, "rows per sorting window (sigma)"}};
  }
  std::string precondition(const GraphState& s, const nlohmann::json&) const override {
    return converting_rule(s);
  }
  void advance(GraphState&, const nlohmann::json&) const override {}
  std::vector<Part> apply(Part& part, const nlohmann::json& p) const override {
    const std::int64_t w = iparam(p, "window");
    for (std::int64_t lo = 0; lo < part.rows(); lo += w)
      sort_rows(part, lo, std::min(lo + w, part.rows()));
    return {};
  }
};

const Operator* make_sort() {
  static Sort op;
  return &op;
}
const Operator* make_sort_sub() {
  static SortSub op;
  return &op;
}

}  // namespace sparsetune::graph
