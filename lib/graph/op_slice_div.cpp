// SLICE_DIV: HTF's division of a tensor by slices (IAP-SpTV §3.1). The part is a tensor's matrix
// view (rows = fibers, each in one slice); every slice goes whole into the part of its format, so
// the slices of one format run as one batch, and each part continues with the sub-graph of that
// format. Inside a part, rows keep their order slice by slice (ascending slice index).
#include "graph/op_util.hpp"
#include "graph/slice_assignment.hpp"

namespace sparsetune::graph {

class SliceDiv final : public Operator {
 public:
  const char* name() const override { return "SLICE_DIV"; }
  Stage stage() const override { return Stage::Converting; }
  const char* summary() const override {
    return "Put every slice of a tensor whole into the part of its format (SpTV)";
  }
  std::vector<ParamSpec> params() const override {
    return {
        {"count", ParamType::Int, 2, 1, 1024,
         "parts (one per slice format used, or per batch of a format's slices)"},
        {"assign", ParamType::IntList, nlohmann::json::array(), 0, 1023,
         "the part of each slice, empty slices included (one per index of the slice mode)", true},
        {"assign_runs", ParamType::IntList, nlohmann::json::array(), 0, 4.0e18,
         "the same as pairs (part, slices) in slice order, written instead where shorter", true}};
  }
  std::vector<std::string> ops() const override { return {"sptv"}; }  // it divides a tensor
  std::string precondition(const GraphState& s, const nlohmann::json& p) const override {
    if (auto r = converting_rule(s); !r.empty()) return r;
    return slice_assignment_rule(p, iparam(p, "count"));
  }
  void advance(GraphState&, const nlohmann::json&) const override {}
  int branches(const nlohmann::json& p) const override {
    return static_cast<int>(iparam(p, "count"));
  }
  bool reads_rows_in_place() const override { return true; }
  std::vector<Part> apply(Part& part, const nlohmann::json& p) const override {
    if (!part.slices)
      throw DesignError("SLICE_DIV: rule: the matrix is not a tensor's view (no slices)");
    const auto& sl = *part.slices;
    const auto part_of = slice_assignment(p, sl.count);
    // Local rows by slice (stable), then slices in ascending order into their parts.
    std::vector<std::int64_t> start(sl.count + 1, 0);
    for (auto g : part.origin_row) ++start[sl.of_row.at(g) + 1];
    for (std::int64_t s = 0; s < sl.count; ++s) start[s + 1] += start[s];
    std::vector<std::int64_t> order(part.rows()), next(start.begin(), start.end() - 1);
    for (std::int64_t r = 0; r < part.rows(); ++r) order[next[sl.of_row[part.origin_row[r]]]++] = r;
    std::vector<Part> out;
    for (std::int64_t i = 0; i < iparam(p, "count"); ++i)
      out.push_back(empty_like(part, std::to_string(i)));
    std::vector<std::int64_t> rows_of(out.size(), 0);
    for (std::int64_t s = 0; s < sl.count; ++s) rows_of[part_of[s]] += start[s + 1] - start[s];
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i].origin_row.reserve(rows_of[i]);
      if (part.in) {  // rows stay in the matrix: only their ranges move
        out[i].in = part.in;
        out[i].in_lo.reserve(rows_of[i]);
        out[i].in_hi.reserve(rows_of[i]);
      } else {
        out[i].row_entries.reserve(rows_of[i]);
      }
    }
    for (std::int64_t s = 0; s < sl.count; ++s) {
      Part& q = out[part_of[s]];
      for (auto k = start[s]; k < start[s + 1]; ++k) {
        const auto r = order[k];
        q.origin_row.push_back(part.origin_row[r]);
        if (part.in)
          q.in_lo.push_back(part.in_lo[r]), q.in_hi.push_back(part.in_hi[r]);
        else
          q.row_entries.push_back(std::move(part.row_entries[r]));
      }
    }
    return out;
  }
};

const Operator* make_slice_div() {
  static SliceDiv op;
  return &op;
}

}  // namespace sparsetune::graph
