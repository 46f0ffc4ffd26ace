#include "features/slice_graph.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <unordered_map>

#include "core/parallel_for.hpp"

namespace sparsetune::features {

namespace {

// Per-thread counters over the columns, reset through the list of columns a slice touched, so
// that a slice costs its own entries and not the width of the matrix. Beyond kDenseCols columns
// (a counter array per thread would cost too much memory) a slice's columns are sorted instead.
constexpr std::int64_t kDenseCols = std::int64_t{1} << 22;

struct Scratch {
  bool dense;
  std::vector<std::int64_t> count;    // entries per column (dense)
  std::vector<std::int32_t> node;     // graph node of a column, -1 when none (dense)
  std::vector<std::int64_t> touched;  // dense: columns with count > 0; else every entry's column
  std::vector<std::int64_t> noded;    // columns with node >= 0 (dense)
  std::unordered_map<std::int64_t, std::int32_t> node_map;  // graph nodes (not dense)
  explicit Scratch(std::int64_t cols) : dense(cols <= kDenseCols) {
    if (dense) count.assign(cols, 0), node.assign(cols, -1);
  }
};

// The slice made of rows `rows` of `a` (`total_rows` counts its empty rows too).
SliceInput build(const Csr64& a, const std::vector<std::int64_t>& rows, double total_rows,
                 const SliceGraphOptions& o, Scratch& w) {
  SliceInput in;
  const double cols = static_cast<double>(a.cols);
  std::int64_t nnz = 0, row_max = 0, row_min = -1;
  double len_sq = 0;  // sum of squared row lengths, for the fibers' spread
  for (auto r : rows) {
    const auto len = a.row_length(r);
    nnz += len;
    len_sq += static_cast<double>(len) * static_cast<double>(len);
    row_max = std::max(row_max, len);
    row_min = row_min < 0 ? len : std::min(row_min, len);
    for (auto k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k)
      if (!w.dense || w.count[a.col_idx[k]]++ == 0) w.touched.push_back(a.col_idx[k]);
  }
  std::int64_t col_max = 0, col_min = -1, distinct = 0;
  const auto column = [&](std::int64_t n) {
    col_max = std::max(col_max, n);
    col_min = col_min < 0 ? n : std::min(col_min, n);
    ++distinct;
  };
  if (w.dense) {
    for (auto c : w.touched) {
      column(w.count[c]);
      w.count[c] = 0;
    }
  } else {
    std::sort(w.touched.begin(), w.touched.end());
    for (std::size_t i = 0, j; i < w.touched.size(); i = j) {
      for (j = i; j < w.touched.size() && w.touched[j] == w.touched[i];) ++j;
      column(static_cast<std::int64_t>(j - i));
    }
  }
  w.touched.clear();
  const auto distinct_cols = static_cast<double>(distinct);
  const auto fibers = static_cast<double>(rows.size());
  const double fiber_min = row_min < 0 ? 0.0 : static_cast<double>(row_min);
  if (static_cast<double>(rows.size()) < total_rows || row_min < 0) row_min = 0;
  if (distinct_cols < cols || col_min < 0) col_min = 0;
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
  const double fiber_mean = fibers > 0 ? n / fibers : 0.0;
  const double fiber_var = fibers > 0 ? len_sq / fibers - fiber_mean * fiber_mean : 0.0;
  in.globals.insert(in.globals.end(), {fibers, fiber_mean, fiber_min,
                                       std::sqrt(std::max(fiber_var, 0.0)), distinct_cols});
  in.nonempty_rows = static_cast<std::int64_t>(rows.size());
  in.density = total_rows > 0 && cols > 0 ? n / (total_rows * cols) : 0.0;

  // The graph: every k-th row, so that rows and edges stay within the limits; columns numbered
  // in the order they first appear.
  const auto count = static_cast<std::int64_t>(rows.size());
  std::int64_t step = std::max<std::int64_t>(1, (count + o.max_rows - 1) / o.max_rows);
  if (nnz > 0) step = std::max(step, (nnz + o.max_edges - 1) / o.max_edges);
  for (std::int64_t i = 0; i < count; i += step) {
    const auto r = rows[i];
    const std::int32_t rn = in.row_nodes++;
    for (auto k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
      const std::int64_t c = a.col_idx[k];
      std::int32_t node;
      if (w.dense) {
        if (w.node[c] < 0) {
          w.node[c] = in.col_nodes++;
          w.noded.push_back(c);
        }
        node = w.node[c];
      } else {
        node = w.node_map.emplace(c, in.col_nodes).first->second;
        if (node == in.col_nodes) ++in.col_nodes;
      }
      in.edges.emplace_back(rn, node);
    }
  }
  for (auto c : w.noded) w.node[c] = -1;
  w.noded.clear();
  w.node_map.clear();
  return in;
}

}  // namespace

const std::vector<std::string>& global_feature_names() {
  static const std::vector<std::string> names = {
      "rows",           "cols",          "nnz",           "row_nnz_mean", "row_nnz_max",
      "row_nnz_min",    "col_nnz_mean",  "col_nnz_max",   "col_nnz_min",  "fibers",
      "fiber_nnz_mean", "fiber_nnz_min", "fiber_nnz_std", "distinct_cols"};
  return names;
}

std::vector<SliceInput> slice_inputs(const SptvMatrix& m, const SliceGraphOptions& o) {
  double fibers = 1.0;  // rows of a slice: the product of the remaining modes' sizes
  for (int d = 0; d < static_cast<int>(m.dims.size()); ++d)
    if (d != m.mode && d != m.slice_mode) fibers *= static_cast<double>(m.dims[d]);
  // Rows by slice, stably (a counting sort; the view already orders them slice by slice).
  std::vector<std::int64_t> start(m.slices + 1, 0);
  for (auto s : m.row_slice) ++start[s + 1];
  for (std::int64_t s = 0; s < m.slices; ++s) start[s + 1] += start[s];
  std::vector<std::int64_t> order(m.a.rows);
  {
    std::vector<std::int64_t> next(start.begin(), start.end() - 1);
    for (std::int64_t r = 0; r < m.a.rows; ++r) order[next[m.row_slice[r]]++] = r;
  }
  std::vector<std::int64_t> nonempty;
  for (std::int64_t s = 0; s < m.slices; ++s)
    if (start[s + 1] > start[s]) nonempty.push_back(s);
  // Slices are independent: each thread takes chunks of them in turn, with counters of its own,
  // and every input lands in its own slot.
  std::vector<SliceInput> out(nonempty.size());
  const int chunks = static_cast<int>(std::min<std::size_t>(nonempty.size(), 4096));
  const int threads = std::min(threads_for(m.a.nnz()), std::max(chunks, 1));
  std::atomic<int> next_chunk{0};
  parallel_for(threads, threads, [&](int) {
    Scratch w(m.a.cols);
    std::vector<std::int64_t> rows;
    for (int c; (c = next_chunk++) < chunks;) {
      const std::size_t lo = nonempty.size() * c / chunks;
      const std::size_t hi = nonempty.size() * (c + 1) / chunks;
      for (std::size_t i = lo; i < hi; ++i) {
        const std::int64_t s = nonempty[i];
        rows.assign(order.begin() + start[s], order.begin() + start[s + 1]);
        out[i] = build(m.a, rows, fibers, o, w);
        out[i].slice = s;
      }
    }
  });
  return out;
}

SliceInput matrix_input(const Csr64& a, const SliceGraphOptions& o) {
  std::vector<std::int64_t> rows;
  for (std::int64_t r = 0; r < a.rows; ++r)
    if (a.row_length(r) > 0) rows.push_back(r);
  Scratch w(a.cols);
  return build(a, rows, static_cast<double>(a.rows), o, w);
}

}  // namespace sparsetune::features
