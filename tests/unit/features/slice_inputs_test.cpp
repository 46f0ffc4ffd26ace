// Slice inputs are built on every core, one slice per task with counters of its own: the same
// inputs on 1 and on 7 threads, the same as each slice built alone as a matrix, and the same
// whether the columns are counted in an array or, for very wide slices, by sorting.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <random>

#include "core/convert.hpp"
#include "core/sptv_matrix.hpp"
#include "features/slice_graph.hpp"

using namespace sparsetune;
using namespace sparsetune::features;

namespace {
void check_same(const SliceInput& a, const SliceInput& b) {
  CHECK(a.globals == b.globals);
  CHECK(a.density == b.density);
  CHECK(a.nonempty_rows == b.nonempty_rows);
  CHECK(a.row_nodes == b.row_nodes);
  CHECK(a.col_nodes == b.col_nodes);
  CHECK(a.edges == b.edges);
}

std::vector<SliceInput> inputs_on(int threads, const SptvMatrix& m) {
  ::setenv("SPARSETUNE_THREADS", std::to_string(threads).c_str(), 1);
  auto r = slice_inputs(m);
  ::unsetenv("SPARSETUNE_THREADS");
  return r;
}
}  // namespace

TEST_CASE("slice inputs: the same on any thread count, and each slice's as a matrix",
          "[features][slice-graph]") {
  // Skewed slices along mode 0 (some far above the graph's sampling limits), 3 * 10^5 entries.
  std::mt19937_64 rng(8);
  SparseTensor t;
  t.dims = {60, 400, 900};
  t.idx.resize(3);
  for (int k = 0; k < 300000; ++k) {
    const auto s = static_cast<std::int64_t>(rng() % 60);
    t.idx[0].push_back(s * s / 60);  // low slices hold more
    t.idx[1].push_back(static_cast<std::int64_t>(rng() % 400));
    t.idx[2].push_back(static_cast<std::int64_t>(rng() % 900));
    t.val.push_back(1.0);
  }
  for (int mode : {1, 2}) {
    INFO("mode " << mode);
    const SptvMatrix m = sptv_matrix(t, mode, 0);
    const auto one = inputs_on(1, m), many = inputs_on(7, m);
    REQUIRE(one.size() == many.size());
    REQUIRE(one.size() > 30);
    for (std::size_t i = 0; i < one.size(); ++i) {
      CHECK(one[i].slice == many[i].slice);
      check_same(one[i], many[i]);
    }
    // Slice s as a matrix of its own: a row per index of the remaining mode (empty ones too),
    // a column per index of `mode`, repeats summed as the view sums them.
    const int other = 3 - mode;
    for (const auto& in : one) {
      Coo64 c;
      c.rows = t.dims[other];
      c.cols = t.dims[mode];
      for (std::int64_t k = 0; k < t.nnz(); ++k)
        if (t.idx[0][k] == in.slice) {
          c.row.push_back(t.idx[other][k]);
          c.col.push_back(t.idx[mode][k]);
          c.val.push_back(t.val[k]);
        }
      check_same(in, matrix_input(coo_to_csr<std::int64_t, std::int64_t>(c)));
    }
  }
}

TEST_CASE("slice inputs of very wide slices count columns by sorting, with the same result",
          "[features][slice-graph]") {
  const std::int64_t wide = std::int64_t{1} << 23, narrow = std::int64_t{1} << 22;
  auto make = [](std::int64_t cols, std::int64_t far) {
    Csr64 a;
    a.rows = 4;
    a.cols = cols;
    a.row_ptr = {0, 2, 3, 3, 6};
    a.col_idx = {5, far, 77, 5, 77, far};
    a.val.assign(6, 1.0);
    return a;
  };
  const SliceInput w = matrix_input(make(wide, wide - 1));
  const SliceInput n = matrix_input(make(narrow, narrow - 1));
  CHECK(w.globals[7] == 2);  // col_nnz_max: each column holds 2
  CHECK(w.globals[8] == 0);  // col_nnz_min: most columns are empty
  CHECK(w.edges == n.edges);
  CHECK(w.col_nodes == 3);
  for (int k : {0, 2, 3, 4, 5, 7, 8}) CHECK(w.globals[k] == n.globals[k]);
  CHECK(w.globals[1] == static_cast<double>(wide));
}

TEST_CASE(
    "slice inputs: the paper's 9 globals describe every fiber, the 5 after them the "
    "non-empty ones",
    "[features][slice-graph]") {
  // 6 fibers x 10 columns; fibers 1, 3 and 4 empty; the others of 4, 1 and 1 entries on columns
  // {0 2 4 6}, {2} and {9}: 5 distinct columns.
  Csr64 a;
  a.rows = 6;
  a.cols = 10;
  a.row_ptr = {0, 4, 4, 5, 5, 5, 6};
  a.col_idx = {0, 2, 4, 6, 2, 9};
  a.val.assign(6, 1.0);
  const auto in = matrix_input(a);
  REQUIRE(global_feature_names().size() == kAllGlobals);
  REQUIRE(in.globals.size() == global_feature_names().size());
  // rows (all 6), cols, nnz, row mean 6/6, max 4, min 0 (empty fibers), column mean 6/10, max 2
  // (column 2), min 0.
  const std::vector<double> paper = {6, 10, 6, 1, 4, 0, 0.6, 2, 0};
  CHECK(std::vector<double>(in.globals.begin(), in.globals.begin() + kPaperGlobals) == paper);
  CHECK(global_feature_names()[kPaperGlobals] == "fibers");
  CHECK(in.globals[9] == 3);                                      // non-empty fibers
  CHECK(in.globals[10] == 2);                                     // 6 entries / 3 fibers
  CHECK(in.globals[11] == 1);                                     // the shortest non-empty fiber
  CHECK(in.globals[12] == Approx(std::sqrt((4 + 1 + 1) / 3.0)));  // (4-2)^2, (1-2)^2 twice
  CHECK(in.globals[13] == 5);                                     // columns 0 2 4 6 9
  CHECK(in.nonempty_rows == 3);

  // No entries at all: every feature 0 but the shape.
  Csr64 e;
  e.rows = 3;
  e.cols = 4;
  e.row_ptr = {0, 0, 0, 0};
  const auto none = matrix_input(e);
  CHECK(none.globals == std::vector<double>{3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
}
