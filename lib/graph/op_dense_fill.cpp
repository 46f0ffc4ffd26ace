// DENSE_FILL: every row of the part stores every column (explicit zeros where the matrix has
// none), the Dense slice format of IAP-SpTV. Mapped one thread per row with interleaved padding,
// the column array becomes a formula the Optimizer computes and the kernel is a GEMV that reads
// only values, column-major.
#include "graph/op_util.hpp"

namespace sparsetune::graph {

class DenseFill final : public Operator {
 public:
  const char* name() const override { return "DENSE_FILL"; }
  Stage stage() const override { return Stage::Converting; }
  const char* summary() const override {
    return "Store every column of every row, zeros included (a dense row block: GEMV)";
  }
  // Kept out of matrix graphs: there it would only pad the search with designs refused for size.
  std::vector<std::string> ops() const override { return {"sptv"}; }
  std::string precondition(const GraphState& s, const nlohmann::json&) const override {
    return converting_rule(s);
  }
  void advance(GraphState&, const nlohmann::json&) const override {}
  std::vector<Part> apply(Part& part, const nlohmann::json&) const override {
    std::int64_t entries = 0;
    for (const auto& r : part.row_entries) entries += static_cast<std::int64_t>(r.size());
    if (part.cols > 0 && part.rows() > INT64_MAX / part.cols) check_stored(part, INT64_MAX, name());
    const std::int64_t full = part.rows() * part.cols;
    check_stored(part, full, name());
    for (auto& row : part.row_entries) {
      std::vector<std::pair<std::int64_t, double>> dense(part.cols);
      for (std::int64_t c = 0; c < part.cols; ++c) dense[c] = {c, 0.0};
      for (const auto& [c, v] : row) dense[c].second += v;
      row = std::move(dense);
    }
    part.pad_entries += full - entries;
    return {};
  }
};

const Operator* make_dense_fill() {
  static DenseFill op;
  return &op;
}

}  // namespace sparsetune::graph
