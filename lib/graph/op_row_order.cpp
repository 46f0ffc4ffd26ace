// ROW_ORDER: the row permutations of output-stationary SpMM (Mehrabi et al., core/row_orders) as
// a converting operator. The part stays CSR; its rows take the order's permutation and keep
// their origin rows, so kernels write y (C) rows in place and a user's B and C keep the matrix's
// row order.
#include "core/row_orders.hpp"
#include "graph/op_util.hpp"
#include "graph/part_csr.hpp"

namespace sparsetune::graph {

class RowOrder final : public Operator {
 public:
  const char* name() const override { return "ROW_ORDER"; }
  Stage stage() const override { return Stage::Converting; }
  const char* summary() const override {
    return "Reorder rows by a row permutation of output-stationary SpMM (order: 0 original, 1 "
           "DCSR, 2 plain, 3 flipped, 4 LPT, 5 warp-aware, 6 CTA-aware, 7 hybrid-1, 8-10 "
           "hybrid-2.1-2.3)";
  }
  std::vector<ParamSpec> params() const override {
    const auto last = static_cast<double>(row_orders::all_orders().size() - 1);
    return {{"order", ParamType::Int, 4, 0, last, "which permutation (see summary); 4: LPT"},
            {"warps", ParamType::Int, 32, 1, 1024, "warps per CTA the order is made for (N_w)"},
            {"row_threads", ParamType::Int, 32, 1, 32, "threads sharing a row (N_t)"},
            {"window", ParamType::Int, 64, 1, 1 << 20, "candidates of each Hamming search"},
            {"candidates", ParamType::Int, 0, 0, 1,
             "where the Hamming searches take them: 0 matrix order, 1 rows sharing a line of B"}};
  }
  // The orders are made for the SpMM kernel's warps and B lines.
  std::vector<std::string> ops() const override { return {"spmm"}; }
  std::string precondition(const GraphState& s, const nlohmann::json&) const override {
    return converting_rule(s);
  }
  void advance(GraphState&, const nlohmann::json&) const override {}
  std::vector<Part> apply(Part& part, const nlohmann::json& p) const override {
    row_orders::Options o;
    o.warps = static_cast<int>(iparam(p, "warps"));
    o.threads = static_cast<int>(iparam(p, "row_threads"));
    o.window = static_cast<int>(iparam(p, "window"));
    o.candidates = iparam(p, "candidates") == 1 ? row_orders::Candidates::shared_lines
                                                : row_orders::Candidates::matrix;
    const auto order = row_orders::all_orders().at(static_cast<std::size_t>(iparam(p, "order")));
    const auto perm = row_orders::row_order(part_csr(part), order, o);
    reorder_rows(part, 0, perm);
    return {};
  }
};

const Operator* make_row_order() {
  static RowOrder op;
  return &op;
}

}  // namespace sparsetune::graph
