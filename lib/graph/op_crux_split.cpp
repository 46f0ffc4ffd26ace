// CRUX_SPLIT(tau_c, tau_r, own_rows): MatXtract's compute density extraction as a dividing
// operator. Part 0 (hot) holds the dense crux: the longest columns covering ⌈tau_c·nnz⌉ entries,
// and in them the rows of longest local length covering ⌈tau_r·nnz⌉; its rows come longest first,
// so consecutive rows (a TC chunk) have similar lengths. Part 1 (cold) holds the rest and
// continues with any CUDA-core sub-graph.
//  - own_rows 0 (MatXtract's split): the hot part holds the crux's entries only; the cold part
//    keeps every row with the entries outside the crux, so both write the hot rows.
//  - own_rows 1: the hot part holds every entry of its rows (their entries outside the hot
//    columns too) and the cold part only the other rows. The parts write disjoint rows, so the
//    format is store-only and its parts run in one launch (codegen/fusion.hpp).
// When the cold part would hold no entry, the hot part takes the empty rows too and the cold part
// none: one kernel. The definition of the crux is lib/core/crux.
#include "core/crux.hpp"
#include "graph/op_util.hpp"
#include "graph/part_csr.hpp"

namespace sparsetune::graph {

class CruxSplit final : public Operator {
 public:
  const char* name() const override { return "CRUX_SPLIT"; }
  Stage stage() const override { return Stage::Converting; }
  const char* summary() const override {
    return "Part 0: the crux (longest columns covering tau_c of the entries, in them the longest "
           "rows covering tau_r), rows longest first; part 1: the rest";
  }
  std::vector<ParamSpec> params() const override {
    return {
        {"tau_c", ParamType::Number, 0.5, 0.0, 1.0, "share of the entries the hot columns cover"},
        {"tau_r", ParamType::Number, 0.3, 0.0, 1.0,
         "share of the entries the hot rows cover within the hot columns (at most tau_c)"},
        {"own_rows", ParamType::Int, 0, 0, 1,
         "1: the hot part holds every entry of its rows and the cold part the other rows "
         "(disjoint rows: store-only, one launch); 0: the hot part holds the crux only"}};
  }
  std::string precondition(const GraphState& s, const nlohmann::json& p) const override {
    if (auto r = converting_rule(s); !r.empty()) return r;
    if (s.op != "spmv") return "CRUX_SPLIT serves op spmv";
    if (nparam(p, "tau_r") > nparam(p, "tau_c"))
      return "tau_r must not exceed tau_c (0 <= tau_r <= tau_c <= 1)";
    return "";
  }
  void advance(GraphState&, const nlohmann::json&) const override {}
  int branches(const nlohmann::json&) const override { return 2; }
  std::vector<Part> apply(Part& part, const nlohmann::json& p) const override {
    const crux::CruxSplit s =
        crux::crux_split(part_csr(part), nparam(p, "tau_c"), nparam(p, "tau_r"));
    const bool own = iparam(p, "own_rows") == 1;
    Part hot = empty_like(part, "0"), cold = empty_like(part, "1");
    std::vector<char> in_hot(static_cast<std::size_t>(part.rows()), 0);
    for (auto r : s.hot_rows) in_hot[static_cast<std::size_t>(r)] = 1;
    // The row permutation of the hot part is its origin_row (hot order -> row of y); columns keep
    // the matrix's indices, so x is read through no permutation.
    hot.origin_row.reserve(s.hot_rows.size());
    hot.row_entries.resize(s.hot_rows.size());
    std::int64_t hot_entries = 0;
    for (std::size_t i = 0; i < s.hot_rows.size(); ++i) {
      hot.origin_row.push_back(part.origin_row[s.hot_rows[i]]);
      if (own)  // the whole row, in the part's order
        hot.row_entries[i] = part.row_entries[static_cast<std::size_t>(s.hot_rows[i])];
      else
        for (auto k = s.hot.row_ptr[i]; k < s.hot.row_ptr[i + 1]; ++k)
          hot.row_entries[i].push_back({s.hot.col_idx[k], s.hot.val[k]});
      hot_entries += static_cast<std::int64_t>(hot.row_entries[i].size());
    }
    // Every entry is in the hot or the cold region: the cold part holds the rest.
    const std::int64_t cold_entries = s.hot.nnz() + s.cold.nnz() - hot_entries;
    if (cold_entries == 0 && !s.hot.val.empty()) {
      // The cold part would hold no entry (the crux holds every entry, or with own_rows every row
      // with one): the hot part takes the empty rows too, after the others, and the cold part
      // has no rows, so the format is one kernel that writes every row once (DASP's
      // whole-matrix tensor-core SpMV), not two.
      for (std::int64_t r = 0; r < part.rows(); ++r)
        if (!in_hot[static_cast<std::size_t>(r)]) {
          hot.origin_row.push_back(part.origin_row[r]);
          hot.row_entries.emplace_back();
        }
    } else if (own) {
      // The other rows, empty ones too, in order: together the parts write every row once.
      for (std::int64_t r = 0; r < part.rows(); ++r)
        if (!in_hot[static_cast<std::size_t>(r)]) {
          cold.origin_row.push_back(part.origin_row[r]);
          cold.row_entries.push_back(std::move(part.row_entries[static_cast<std::size_t>(r)]));
        }
    } else {
      // The cold part keeps every row (empty ones too), so that with tau_r = 0 it is the part
      // itself and a sub-graph that writes every row once still does.
      cold.origin_row = part.origin_row;
      cold.row_entries.resize(part.rows());
      for (std::int64_t r = 0; r < part.rows(); ++r)
        for (auto k = s.cold.row_ptr[r]; k < s.cold.row_ptr[r + 1]; ++k)
          cold.row_entries[r].push_back({s.cold.col_idx[k], s.cold.val[k]});
    }
    part.row_entries.clear();
    std::vector<Part> out;
    out.push_back(std::move(hot));
    out.push_back(std::move(cold));
    return out;
  }
};

const Operator* make_crux_split() {
  static CruxSplit op;
  return &op;
}

}  // namespace sparsetune::graph
