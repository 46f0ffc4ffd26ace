// COL_TILE: SpMM's dense-column mapping. Each thread covers `tn` consecutive columns of B and C
// (its C tile lives in registers) and loads B's row segment `vec` values at a time; the grid's y
// dimension walks the column tiles, so the sparse mapping above is unchanged for any N.
//
// `lanes` > 1 maps lanes over columns (GE-SpMM's coalesced row caching, Sputnik, cuSPARSE's CSR
// ALG2): each group of `lanes` consecutive lanes walks the SAME thread blocks, one after another,
// lane g of the group covering the tn columns at g * tn of the block's lanes * tn, so a B row
// segment is read coalesced by the group and a thread block's sum needs no other lane. The round
// of 32 thread blocks is taken group by group (group q: thread blocks q * lanes + i, i < lanes).
// Reductions across lanes then add only whole groups: WARP_TOTAL_RED shuffles across groups
// (nothing when a warp is one group); reductions that pair lanes with thread blocks (segmented,
// bitmap) and block-level ones are refused (ReductionOperator::serves_lane_groups).
#include "graph/op_util.hpp"

namespace sparsetune::graph {

class ColTile final : public Operator {
 public:
  const char* name() const override { return "COL_TILE"; }
  Stage stage() const override { return Stage::Mapping; }
  const char* summary() const override {
    return "Columns of B and C one thread covers, the vector width of its B loads, and the lanes "
           "that share a thread block's entries over columns (SpMM)";
  }
  std::vector<ParamSpec> params() const override {
    return {
        {"tn", ParamType::Int, 4, 1, 32, "columns of B and C per thread (a C tile in registers)"},
        {"vec", ParamType::Int, 1, 1, 4,
         "widest load of a B row, in values: 1, 2 or 4 (a tile loads with the widest of 4, "
         "2, 1 that divides both vec and tn)"},
        {"lanes", ParamType::Int, 1, 1, 32,
         "lanes that walk the same thread blocks, each on its own tn columns (1, 2, 4, 8, 16 or "
         "32; 1: each lane its own thread block)",
         true}};
  }
  std::vector<std::string> ops() const override { return {"spmm"}; }
  std::string precondition(const GraphState& s, const nlohmann::json& p) const override {
    if (auto r = mapping_rule(s); !r.empty()) return r;
    if (s.col_tiled) return "COL_TILE appears once per part";
    if (iparam(p, "vec") == 3) return "vec must be 1, 2 or 4";
    const auto lanes = p.contains("lanes") ? iparam(p, "lanes") : 1;
    if ((lanes & (lanes - 1)) != 0) return "lanes must be 1, 2, 4, 8, 16 or 32";
    return "";
  }
  void advance(GraphState& s, const nlohmann::json& p) const override {
    s.col_tiled = true;
    s.col_lanes = p.contains("lanes") ? static_cast<int>(iparam(p, "lanes")) : 1;
  }
  std::vector<Part> apply(Part& part, const nlohmann::json& p) const override {
    part.col_tile = static_cast<int>(iparam(p, "tn"));
    // Any (tn, vec) is valid, so the search may tune both axes freely: an odd tile loads singly.
    int vec = static_cast<int>(iparam(p, "vec"));
    while (part.col_tile % vec != 0) vec /= 2;
    part.col_vec = vec;
    part.col_lanes = p.contains("lanes") ? static_cast<int>(iparam(p, "lanes")) : 1;
    return {};
  }
};

const Operator* make_col_tile() {
  static ColTile op;
  return &op;
}

}  // namespace sparsetune::graph
