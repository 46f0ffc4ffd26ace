// COL_TILE: SpMM's dense-column mapping. Each thread covers `tn` consecutive columns of B and C
// (its C tile lives in registers) and loads B's row segment `vec` values at a time; the grid's y
// dimension walks the column tiles, so the sparse mapping above is unchanged for any N.
#include "graph/op_util.hpp"

namespace sparsetune::graph {

class ColTile final : public Operator {
 public:
  const char* name() const override { return "COL_TILE"; }
  Stage stage() const override { return Stage::Mapping; }
  const char* summary() const override {
    return "Columns of B and C one thread covers, and the vector width of its B loads (SpMM)";
  }
  std::vector<ParamSpec> params() const override {
    return {
        {"tn", ParamType::Int, 4, 1, 32, "columns of B and C per thread (a C tile in registers)"},
        {"vec", ParamType::Int, 1, 1, 4,
         "widest load of a B row, in values: 1, 2 or 4 (a tile loads with the widest of 4, "
         "2, 1 that divides both vec and tn)"}};
  }
  std::vector<std::string> ops() const override { return {"spmm"}; }
  std::string precondition(const GraphState& s, const nlohmann::json& p) const override {
    if (auto r = mapping_rule(s); !r.empty()) return r;
    if (s.col_tiled) return "COL_TILE appears once per part";
    if (iparam(p, "vec") == 3) return "vec must be 1, 2 or 4";
    return "";
  }
  void advance(GraphState& s, const nlohmann::json&) const override { s.col_tiled = true; }
  std::vector<Part> apply(Part& part, const nlohmann::json& p) const override {
    part.col_tile = static_cast<int>(iparam(p, "tn"));
    // Any (tn, vec) is valid, so the search may tune both axes freely: an odd tile loads singly.
    int vec = static_cast<int>(iparam(p, "vec"));
    while (part.col_tile % vec != 0) vec /= 2;
    part.col_vec = vec;
    return {};
  }
};

const Operator* make_col_tile() {
  static ColTile op;
  return &op;
}

}  // namespace sparsetune::graph
