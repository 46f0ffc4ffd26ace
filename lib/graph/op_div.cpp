// ROW_DIV, COL_DIV and BIN: divide a part into parts that each continue with a sub-graph.
#include <algorithm>

#include "graph/op_util.hpp"

namespace sparsetune::graph {

namespace {

std::vector<ParamSpec> div_params(const char* what) {
  return {{"count", ParamType::Int, 2, 1, 1024, std::string("equal ") + what + " bands"},
          {"bounds", ParamType::IntList, nlohmann::json::array(), 1, 4.0e18,
           std::string("explicit first ") + what + " of parts 1.. (overrides count)"}};
}

int div_branches(const nlohmann::json& p) {
  const auto& b = p.at("bounds");
  return b.empty() ? static_cast<int>(iparam(p, "count")) : static_cast<int>(b.size()) + 1;
}

std::string increasing_rule(const nlohmann::json& b) {
  for (std::size_t i = 1; i < b.size(); ++i)
    if (b[i].get<std::int64_t>() <= b[i - 1].get<std::int64_t>())
      return "bounds must be strictly increasing";
  return "";
}

// Cut points 0 = c_0 <= c_1 <= ... <= c_k = n.
std::vector<std::int64_t> cuts(const nlohmann::json& p, std::int64_t n) {
  std::vector<std::int64_t> c{0};
  const auto& b = p.at("bounds");
  if (b.empty()) {
    const std::int64_t k = iparam(p, "count");
    for (std::int64_t i = 1; i < k; ++i) c.push_back(n * i / k);
  } else {
    for (const auto& x : b) c.push_back(std::min(x.get<std::int64_t>(), n));
  }
  c.push_back(n);
  return c;
}

}  // namespace

class RowDiv final : public Operator {
 public:
  const char* name() const override { return "ROW_DIV"; }
  Stage stage() const override { return Stage::Converting; }
  const char* summary() const override { return "Divide the part into row bands"; }
  std::vector<ParamSpec> params() const override { return div_params("row"); }
  std::string precondition(const GraphState& s, const nlohmann::json& p) const override {
    if (auto r = converting_rule(s); !r.empty()) return r;
    return increasing_rule(p.at("bounds"));
  }
  void advance(GraphState&, const nlohmann::json&) const override {}
  int branches(const nlohmann::json& p) const override { return div_branches(p); }
  std::vector<Part> apply(Part& part, const nlohmann::json& p) const override {
    const auto c = cuts(p, part.rows());
    std::vector<Part> out;
    for (std::size_t i = 0; i + 1 < c.size(); ++i) {
      Part q = empty_like(part, std::to_string(i));
      for (std::int64_t r = c[i]; r < c[i + 1]; ++r) {
        q.origin_row.push_back(part.origin_row[r]);
        q.row_entries.push_back(std::move(part.row_entries[r]));
      }
      out.push_back(std::move(q));
    }
    return out;
  }
};

class ColDiv final : public Operator {
 public:
  const char* name() const override { return "COL_DIV"; }
  Stage stage() const override { return Stage::Converting; }
  const char* summary() const override {
    return "Divide the part into column bands (all rows in each; results add up)";
  }
  std::vector<ParamSpec> params() const override { return div_params("column"); }
  std::string precondition(const GraphState& s, const nlohmann::json& p) const override {
    if (auto r = converting_rule(s); !r.empty()) return r;
    return increasing_rule(p.at("bounds"));
  }
  void advance(GraphState&, const nlohmann::json&) const override {}
  int branches(const nlohmann::json& p) const override { return div_branches(p); }
  std::vector<Part> apply(Part& part, const nlohmann::json& p) const override {
    const auto c = cuts(p, part.cols);
    std::vector<Part> out;
    for (std::size_t i = 0; i + 1 < c.size(); ++i) {
      Part q = empty_like(part, std::to_string(i));
      q.origin_row = part.origin_row;
      q.row_entries.resize(part.rows());
      for (std::int64_t r = 0; r < part.rows(); ++r)
        for (const auto& e : part.row_entries[r])
          if (e.first >= c[i] && e.first < c[i + 1]) q.row_entries[r].push_back(e);
      out.push_back(std::move(q));
    }
    return out;
  }
};

class Bin final : public Operator {
 public:
  const char* name() const override { return "BIN"; }
  Stage stage() const override { return Stage::Converting; }
  const char* summary() const override {
    return "Put rows into bins by non-zero count; each bin is a part";
  }
  std::vector<ParamSpec> params() const override {
    return {{"bounds", ParamType::IntList, nlohmann::json::array({4, 32}), 1, 4.0e18,
             "row-length thresholds: bin i holds lengths in [bounds[i-1], bounds[i])"}};
  }
  std::string precondition(const GraphState& s, const nlohmann::json& p) const override {
    if (auto r = converting_rule(s); !r.empty()) return r;
    if (p.at("bounds").empty()) return "BIN needs at least one bound";
    return increasing_rule(p.at("bounds"));
  }
  void advance(GraphState&, const nlohmann::json&) const override {}
  int branches(const nlohmann::json& p) const override {
    return static_cast<int>(p.at("bounds").size()) + 1;
  }
  std::vector<Part> apply(Part& part, const nlohmann::json& p) const override {
    std::vector<std::int64_t> b;
    for (const auto& x : p.at("bounds")) b.push_back(x.get<std::int64_t>());
    std::vector<Part> out;
    for (std::size_t i = 0; i <= b.size(); ++i) out.push_back(empty_like(part, std::to_string(i)));
    for (std::int64_t r = 0; r < part.rows(); ++r) {
      const auto len = static_cast<std::int64_t>(part.row_entries[r].size());
      const auto bin = std::upper_bound(b.begin(), b.end(), len) - b.begin();
      out[bin].origin_row.push_back(part.origin_row[r]);
      out[bin].row_entries.push_back(std::move(part.row_entries[r]));
    }
    return out;
  }
};

const Operator* make_row_div() {
  static RowDiv op;
  return &op;
}
const Operator* make_col_div() {
  static ColDiv op;
  return &op;
}
const Operator* make_bin() {
  static Bin op;
  return &op;
}

}  // namespace sparsetune::graph
