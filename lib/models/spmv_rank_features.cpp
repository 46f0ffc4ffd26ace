#include "models/spmv_rank_features.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.hpp"
#include "features/matrix_features.hpp"
#include "graph/registry.hpp"
#include "models/launch_estimate.hpp"

namespace sparsetune::models {

namespace {

// The matrix features' names, as matrix_features() computes them (of any matrix: a 2 x 2 one).
std::vector<std::string> matrix_feature_names() {
  Csr64 a;
  a.rows = a.cols = 2;
  a.row_ptr = {0, 1, 2};
  a.col_idx = {0, 1};
  a.val = {1.0, 1.0};
  std::vector<std::string> names;
  for (const auto& f : features::matrix_features(a)) names.push_back(features::feature_key(f));
  return names;
}

// One scalar slot of the descriptor: an operator's parameter.
struct ParamSlot {
  std::string op, param;
  graph::ParamType type;
  nlohmann::json fallback;
};

struct Layout {
  std::vector<std::string> names;
  std::size_t matrix_width = 0;
  std::vector<std::string> ops;                 // counted operators, registration order
  std::map<std::string, std::size_t> op_index;  // name -> position in ops
  std::vector<ParamSlot> params;                // scalar slots, after the counts
  std::map<std::string, std::vector<std::size_t>> params_of;  // op -> its slots
  std::size_t rows_at = 0, nnz_at = 0;  // the matrix's size among its features
};

const Layout& layout() {
  static const Layout l = [] {
    Layout l;
    l.names = matrix_feature_names();
    l.names.push_back("dtype_bytes");
    l.matrix_width = l.names.size();
    l.names.push_back("graph.operators");
    l.names.push_back("graph.parts");
    // The ranking is SpMV's (a tensor's view included): SpMM-only operators are no features.
    const auto ranked = [](const graph::Operator* op) {
      return op->serves("spmv") || op->serves("sptv");
    };
    for (const auto* op : graph::operators()) {
      if (!ranked(op)) continue;
      l.op_index[op->name()] = l.ops.size();
      l.ops.push_back(op->name());
      l.names.push_back(std::string("op.") + op->name());
    }
    for (const auto* op : graph::operators())
      for (const auto& p : ranked(op) ? op->params() : std::vector<graph::ParamSpec>{}) {
        l.params_of[op->name()].push_back(l.params.size());
        l.params.push_back({op->name(), p.name, p.type, p.fallback});
        l.names.push_back(std::string("op.") + op->name() + "." + p.name +
                          (p.type == graph::ParamType::IntList ? ".len" : ""));
      }
    for (const auto& n : launch_feature_names()) l.names.push_back(n);
    const auto at = [&](const char* name) {
      const auto it = std::find(l.names.begin(), l.names.begin() + l.matrix_width, name);
      if (it == l.names.begin() + l.matrix_width)
        throw Error(std::string("ranking features: no matrix feature ") + name);
      return static_cast<std::size_t>(it - l.names.begin());
    };
    l.rows_at = at("alphasparse.rows");
    l.nnz_at = at("alphasparse.nnz");
    return l;
  }();
  return l;
}

double param_value(const nlohmann::json& v, graph::ParamType t) {
  if (t == graph::ParamType::IntList) return v.is_array() ? static_cast<double>(v.size()) : -1.0;
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (v.is_number()) return v.get<double>();
  return -1.0;
}

struct Walk {
  const Layout& l;
  std::vector<double> counts, params;
  std::vector<bool> seen;  // a parameter slot already taken by an earlier occurrence
  double operators = 0, parts = 0;

  explicit Walk(const Layout& lay)
      : l(lay),
        counts(lay.ops.size(), 0.0),
        params(lay.params.size(), -1.0),
        seen(lay.params.size(), false) {}

  void list(const std::vector<graph::OpNode>& ops) {
    bool divided = false;
    for (const auto& n : ops) {
      ++operators;
      if (const auto it = l.op_index.find(n.op); it != l.op_index.end()) ++counts[it->second];
      if (const auto it = l.params_of.find(n.op); it != l.params_of.end())
        for (std::size_t k : it->second) {
          if (seen[k]) continue;
          seen[k] = true;
          const auto& s = l.params[k];
          params[k] =
              param_value(n.params.contains(s.param) ? n.params[s.param] : s.fallback, s.type);
        }
      for (const auto& b : n.branches) list(b);
      divided = divided || !n.branches.empty();
    }
    if (!divided) ++parts;  // a list that ends without dividing is one part's kernel
  }
};

int dtype_bytes(const std::string& dtype, const std::string& source) {
  if (dtype == "f64") return 8;
  if (dtype == "f32") return 4;
  if (dtype == "f16") return 2;
  throw Error(source + ": unknown value type '" + dtype + "'");
}

}  // namespace

const std::vector<std::string>& spmv_rank_feature_names() { return layout().names; }
std::size_t spmv_rank_matrix_width() { return layout().matrix_width; }
std::size_t spmm_rank_matrix_width() { return layout().matrix_width + 1; }  // and log2(n)

std::vector<double> spmv_rank_matrix_part(const nlohmann::json& matrix_features,
                                          const std::string& dtype, const std::string& source) {
  const auto& l = layout();
  if (!matrix_features.is_object()) throw Error(source + ": matrix features are not an object");
  std::vector<double> row;
  row.reserve(l.names.size());
  for (std::size_t k = 0; k + 1 < l.matrix_width; ++k) {
    const auto it = matrix_features.find(l.names[k]);
    if (it == matrix_features.end() || !it->is_number())
      throw Error(source + ": matrix features: no number '" + l.names[k] + "'");
    const double v = it->get<double>();
    if (!std::isfinite(v))
      throw Error(source + ": matrix features: '" + l.names[k] + "' is not finite");
    row.push_back(v);
  }
  row.push_back(dtype_bytes(dtype, source));
  return row;
}

const std::vector<std::string>& spmm_rank_feature_names() {
  static const std::vector<std::string> names = [] {
    auto v = layout().names;
    v.insert(v.begin() + static_cast<std::ptrdiff_t>(layout().matrix_width), "log2_n");
    return v;
  }();
  return names;
}

std::vector<double> spmm_rank_matrix_part(const nlohmann::json& matrix_features,
                                          const std::string& dtype, std::int64_t n,
                                          const std::string& source) {
  if (n < 1) throw Error(source + ": SpMM needs n of 1 or more (got " + std::to_string(n) + ")");
  auto row = spmv_rank_matrix_part(matrix_features, dtype, source);
  row.push_back(std::log2(static_cast<double>(n)));
  return row;
}

double spmm_floor_us(std::int64_t rows, std::int64_t cols, std::int64_t nnz, std::int64_t n,
                     const std::string& dtype) {
  const double v = dtype == "f32" ? 4.0 : dtype == "f16" ? 2.0 : 8.0;
  const double bytes = static_cast<double>(rows + 1) * 4 + static_cast<double>(nnz) * (4 + v) +
                       static_cast<double>(cols + rows) * static_cast<double>(n) * v;
  return bytes / 3000e9 * 1e6;
}

void append_graph_part(std::vector<double>& row, const graph::Graph& candidate) {
  Walk w(layout());
  w.list(candidate.ops);
  row.push_back(w.operators);
  row.push_back(w.parts);
  row.insert(row.end(), w.counts.begin(), w.counts.end());
  for (double& v : w.params)
    if (!std::isfinite(v)) v = -1.0;
  row.insert(row.end(), w.params.begin(), w.params.end());
  const auto launch = launch_features(
      estimate_launch(candidate, row.at(layout().rows_at), row.at(layout().nnz_at)));
  row.insert(row.end(), launch.begin(), launch.end());
}

std::vector<double> spmv_rank_row(const nlohmann::json& matrix_features, const std::string& dtype,
                                  const graph::Graph& candidate, const std::string& source) {
  auto row = spmv_rank_matrix_part(matrix_features, dtype, source);
  append_graph_part(row, candidate);
  return row;
}

double spmv_floor_us(std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                     const std::string& dtype) {
  const double v = dtype == "f32" ? 4.0 : dtype == "f16" ? 2.0 : 8.0;
  const double bytes = static_cast<double>(rows + 1) * 4 + static_cast<double>(nnz) * (4 + v) +
                       static_cast<double>(cols) * v + static_cast<double>(rows) * v;
  return bytes / 3000e9 * 1e6;
}

}  // namespace sparsetune::models
