// COMPRESS: stores only the non-zeros, row after row; the mapping stage starts here.
#include "graph/op_util.hpp"

namespace sparsetune::graph {

class Compress final : public Operator {
 public:
  const char* name() const override { return "COMPRESS"; }
  Stage stage() const override { return Stage::Converting; }
  const char* summary() const override { return "Store only the non-zeros, row after row"; }
  std::string precondition(const GraphState& s, const nlohmann::json&) const override {
    return s.compressed ? "COMPRESS appears once per part" : "";
  }
  void advance(GraphState& s, const nlohmann::json&) const override { s.compressed = true; }
  std::vector<Part> apply(Part& part, const nlohmann::json&) const override {
    part.nz.clear();
    std::size_t n = 0;
    for (const auto& row : part.row_entries) n += row.size();
    part.nz.reserve(n);
    for (std::int64_t r = 0; r < part.rows(); ++r)
      for (const auto& [c, v] : part.row_entries[r]) part.nz.push_back({r, c, v});
    part.row_entries.clear();
    part.row_entries.shrink_to_fit();
    part.compressed = true;
    return {};
  }
};

const Operator* make_compress() {
  static Compress op;
  return &op;
}

}  // namespace sparsetune::graph
