#include "features/slice_graph.hpp"

#include <algorithm>
#include <unordered_map>

namespace sparsetune::features {

namespace {

// The slice made of rows `rows` of `a` (`total_rows` counts its empty rows too).
SliceInput build(const Csr64& a, const std::vector<std::int64_t>& rows, double total_rows,
                 const SliceGraphOptions& o) {
  SliceInput in;
  const double cols = static_cast<double>(a.cols);
  std::int64_t nnz = 0, row_max = 0, row_min = -1;
  std::unordered_map<std::int64_t, std::int64_t> col_count;
  for (auto r : rows) {
    const auto len = a.row_length(r);
    nnz += len;
    row_max = std::max(row_max, len);
    row_min = row_min < 0 ? len : std::min(row_min, len);
    for (auto k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) ++col_count[a.col_idx[k]];
  }
  std::int64_t col_max = 0, col_min = -1;
  for (const auto& [c, n] : col_count) {
    col_max = std::max(col_max, n);
    col_min = col_min < 0 ? n : std::min(col_min, n);
  }
  if (static_cast<double>(rows.size()) < total_rows || row_min < 0) row_min = 0;
  if (static_cast<double>(col_count.size()) < cols || col_min < 0) col_min = 0;
  const double n = static_cast<double>(nnz);
  in.globals = {total_rows,
                cols,
                n,
                total_rows > 0 ? n / total_rows : 0.0,
                static_cast<double>(row_max),
                static_cast<double>(row_min),
                cols > 0 ? n / cols : 0.0,
                static_cast<double>(col_max),
                static_cast<double>(col_min)};
  in.nonempty_rows = static_cast<std::int64_t>(rows.size());
  in.density = total_rows > 0 && cols > 0 ? n / (total_rows * cols) : 0.0;

  // The graph: every k-th row, so that rows and edges stay within the limits.
  const auto count = static_cast<std::int64_t>(rows.size());
  std::int64_t step = std::max<std::int64_t>(1, (count + o.max_rows - 1) / o.max_rows);
  if (nnz > 0) step = std::max(step, (nnz + o.max_edges - 1) / o.max_edges);
  std::unordered_map<std::int64_t, std::int32_t> col_node;
  for (std::int64_t i = 0; i < count; i += step) {
    const auto r = rows[i];
    const std::int32_t rn = in.row_nodes++;
    for (auto k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
      auto [it, fresh] = col_node.emplace(a.col_idx[k], in.col_nodes);
      if (fresh) ++in.col_nodes;
      in.edges.emplace_back(rn, it->second);
    }
  }
  return in;
}

}  // namespace

const std::vector<std::string>& global_feature_names() {
  static const std::vector<std::string> names = {"rows",         "cols",        "nnz",
                                                 "row_nnz_mean", "row_nnz_max", "row_nnz_min",
                                                 "col_nnz_mean", "col_nnz_max", "col_nnz_min"};
  return names;
}

std::vector<SliceInput> slice_inputs(const SptvMatrix& m, const SliceGraphOptions& o) {
  double fibers = 1.0;  // rows of a slice: the product of the remaining modes' sizes
  for (int d = 0; d < static_cast<int>(m.dims.size()); ++d)
    if (d != m.mode && d != m.slice_mode) fibers *= static_cast<double>(m.dims[d]);
  std::vector<std::vector<std::int64_t>> rows(m.slices);
  for (std::int64_t r = 0; r < m.a.rows; ++r) rows[m.row_slice[r]].push_back(r);
  std::vector<SliceInput> out;
  for (std::int64_t s = 0; s < m.slices; ++s) {
    if (rows[s].empty()) continue;
    out.push_back(build(m.a, rows[s], fibers, o));
    out.back().slice = s;
  }
  return out;
}

SliceInput matrix_input(const Csr64& a, const SliceGraphOptions& o) {
  std::vector<std::int64_t> rows;
  for (std::int64_t r = 0; r < a.rows; ++r)
    if (a.row_length(r) > 0) rows.push_back(r);
  return build(a, rows, static_cast<double>(a.rows), o);
}

}  // namespace sparsetune::features
