// Column-major B and C (Format::layout "col"): the CPU interpreter against the fp64 reference on
// SpMM graphs of every kind of sink (store, add, atomics), CELL and lanes over columns; n = 1, 3,
// 32, 33; leading dimensions above the minimum; f64, f32, f16; alpha/beta with beta = 0 over a
// NaN-filled C; and the layout in the format binary.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>

#include "core/reference.hpp"
#include "graph/cell_graph.hpp"
#include "graph/designer.hpp"
#include "graph/half.hpp"
#include "graph/interpreter.hpp"
#include "graph/spmm_graph.hpp"
#include "graph_test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::graph;

namespace {

struct Shape {
  const char* name;
  const char* ops;
  int tn, vec, lanes;
};

const Shape kShapes[] = {
    {"csr-vector", R"([{"op": "COMPRESS"}, {"op": "BMW_ROW_BLOCK", "rows": 1},
      {"op": "SET_RESOURCES", "threads": 128}, {"op": "THREAD_TOTAL_RED"},
      {"op": "WARP_TOTAL_RED"}])",
     4, 4, 1},
    {"csr-scalar", R"([{"op": "COMPRESS"}, {"op": "BMT_ROW_BLOCK", "rows": 1},
      {"op": "SET_RESOURCES", "threads": 64}, {"op": "THREAD_TOTAL_RED"}])",
     3, 1, 1},
    {"nnz-split-atomic", R"([{"op": "COMPRESS"}, {"op": "BMT_NNZ_BLOCK", "nnz": 5},
      {"op": "THREAD_BITMAP_RED"}, {"op": "GMEM_ATOM_RED"}])",
     2, 2, 1},
    {"csr-vector-lanes", R"([{"op": "COMPRESS"}, {"op": "BMW_ROW_BLOCK", "rows": 1},
      {"op": "SET_RESOURCES", "threads": 128}, {"op": "THREAD_TOTAL_RED"},
      {"op": "WARP_TOTAL_RED"}])",
     1, 1, 32},
    {"warp-row-lanes", R"([{"op": "COMPRESS"}, {"op": "BMW_ROW_BLOCK", "rows": 1},
      {"op": "BMT_ROW_BLOCK", "rows": 1}, {"op": "THREAD_TOTAL_RED"}])",
     2, 2, 8},
};

Graph shape_graph(const Shape& s) {
  return as_spmm(parse_graph(std::string(R"({"ops": )") + s.ops + "}", s.name), s.tn, s.vec,
                 s.lanes);
}

double round_to(double v, const std::string& dtype) {
  if (dtype == "f32") return static_cast<float>(v);
  if (dtype == "f16") return half_to_float(float_to_half(static_cast<float>(v)));
  return v;
}

// Values k / 8 for |k| <= 16: exact in fp16, fp32 and fp64, so only the order of additions
// separates the interpreter from the reference.
double small(std::mt19937_64& rng) {
  return static_cast<double>(std::uniform_int_distribution<int>(-16, 16)(rng)) / 8.0;
}

// Checks C = alpha A B + beta C0 column-major with ldb = cols + pad_b, ldc = rows + pad_c: B's
// padding holds NaN (never read), C's padding a marker (never written); beta = 0 runs over a C
// of NaNs.
void check_colmajor(const Format& f, const Csr64& a, std::int64_t n, double alpha, double beta,
                    std::int64_t pad_b, std::int64_t pad_c, std::uint64_t seed) {
  REQUIRE(f.col_major());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::int64_t ldb = std::max<std::int64_t>(a.cols, 1) + pad_b;
  const std::int64_t ldc = std::max<std::int64_t>(a.rows, 1) + pad_c;
  std::mt19937_64 rng(seed);
  std::vector<double> b(static_cast<std::size_t>(ldb * n), nan);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < a.cols; ++i) b[i + j * ldb] = small(rng);
  std::vector<double> c(static_cast<std::size_t>(ldc * n), 99.0), c0 = c;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < a.rows; ++i)
      c[i + j * ldc] = c0[i + j * ldc] = beta == 0.0 ? nan : small(rng);
  Csr64 ar = a;
  for (auto& v : ar.val) v = round_to(v, f.dtype);
  interpret_spmm(f, b, n, ldb, alpha, beta, c, ldc);
  for (std::int64_t j = 0; j < n; ++j) {
    std::vector<double> x(static_cast<std::size_t>(a.cols));
    for (std::int64_t i = 0; i < a.cols; ++i) x[i] = b[i + j * ldb];
    const auto y = spmv_reference(ar, x);
    for (std::int64_t i = 0; i < a.rows; ++i) {
      const double want = alpha * y[i] + (beta == 0.0 ? 0.0 : beta * c0[i + j * ldc]);
      INFO("column " << j << " row " << i);
      REQUIRE(std::abs(c[i + j * ldc] - want) <= 1e-12 * (1.0 + std::abs(want)));
    }
    for (std::int64_t i = a.rows; i < ldc; ++i) REQUIRE(c[i + j * ldc] == 99.0);
  }
}

}  // namespace

TEST_CASE("column-major B and C: the interpreter gives the reference product", "[graph][spmm]") {
  const auto a = test::random_matrix(11, 70, 45, 0.08);
  int k = 0;
  for (const auto& s : kShapes)
    for (const char* dtype : {"f64", "f32", "f16"})
      for (std::int64_t n : {1, 3, 32, 33}) {
        DesignOptions o;
        o.dtype = dtype;
        Format f = design(shape_graph(s), a, o);
        f.layout = "col";
        INFO(s.name << " " << dtype << " n = " << n);
        check_colmajor(f, a, n, 1.0, 0.0, 0, 0, 100 + k);
        check_colmajor(f, a, n, -1.5, 0.0, 3, 5, 200 + k);   // beta = 0 over NaN, padded B and C
        check_colmajor(f, a, n, 0.75, -2.0, 1, 2, 300 + k);  // beta reads C
        ++k;
      }
}

TEST_CASE("column-major B and C: CELL and the edge matrices", "[graph][spmm]") {
  const auto a = test::random_matrix(12, 90, 64, 0.06);
  for (int p : {1, 3}) {
    CellGraphOptions co;
    co.partitions = p;
    co.block_factor = 2;
    for (const auto& g : {cell_graph(a, 33, co), cell_graph(std::vector<std::int64_t>(p, 2), co)}) {
      Format f = design(g, a);
      f.layout = "col";
      for (std::int64_t n : {1, 3, 32, 33}) {
        INFO("CELL, " << p << " partitions, n = " << n);
        check_colmajor(f, a, n, 1.0, 0.0, 2, 1, 7);
        check_colmajor(f, a, n, 2.0, 0.5, 0, 4, 8);
      }
    }
  }
  for (const auto& [name, m] : test::edge_matrices()) {
    Format f = design(shape_graph(kShapes[0]), m);
    f.layout = "col";
    INFO(name);
    check_colmajor(f, m, 3, 1.0, 0.0, 1, 1, 9);
    check_colmajor(f, m, 33, -1.0, 2.0, 0, 0, 10);
  }
}

TEST_CASE("column-major B and C: leading dimensions and the row-major equivalence",
          "[graph][spmm]") {
  const auto a = test::from_triples(4, 3, {{0, 0, 1}, {0, 2, 2}, {2, 1, 3}, {3, 0, 4}, {3, 2, 5}});
  Format f = design(shape_graph(kShapes[0]), a);
  const Format row = f;
  f.layout = "col";
  // B (3 x 3) = rows [1 2 3], [4 5 6], [7 8 9], stored column by column.
  const std::vector<double> b_col = {1, 4, 7, 2, 5, 8, 3, 6, 9};
  const std::vector<double> b_row = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const auto c_row = interpret_spmm(row, b_row, 3);
  const auto c_col = interpret_spmm(f, b_col, 3);  // packed: ldb = 3, ldc = 4
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t j = 0; j < 3; ++j) REQUIRE(c_col[i + j * 4] == c_row[i * 3 + j]);
  REQUIRE(c_col == std::vector<double>{15, 0, 12, 39, 18, 0, 15, 48, 21, 0, 18, 57});
  // ldb below the rows of B, ldc below the rows of C, and too short arrays are refused.
  std::vector<double> c(12);
  REQUIRE_THROWS_WITH(interpret_spmm(f, b_col, 3, 2, 1.0, 0.0, c, 4),
                      Catch::Contains("column-major ldb and ldc must be at least"));
  REQUIRE_THROWS_WITH(interpret_spmm(f, b_col, 3, 3, 1.0, 0.0, c, 3),
                      Catch::Contains("column-major ldb and ldc must be at least"));
  REQUIRE_THROWS_WITH(interpret_spmm(f, b_col, 3, 4, 1.0, 0.0, c, 4),
                      Catch::Contains("B holds 9 values"));
  // Row-major n = 3 with ldb = 3 is fine where column-major needs ldb >= 3 rows too: a 4 x 3 C
  // with ldc = 3 is not.
  REQUIRE_NOTHROW(interpret_spmm(row, b_row, 3, 3, 1.0, 0.0, c, 3));
}

TEST_CASE("the format binary records a column-major layout, and only that", "[graph][spmm]") {
  const auto a = test::random_matrix(3, 40, 30, 0.1);
  Format f = design(shape_graph(kShapes[2]), a);
  REQUIRE(to_safetensors(f, "test").metadata.count("layout") == 0);  // row-major: unchanged
  f.layout = "col";
  auto s = to_safetensors(f, "test");
  REQUIRE(s.metadata.at("layout") == "col");
  const Format g = from_safetensors(s, "test");
  REQUIRE(g.col_major());
  std::mt19937_64 rng(5);
  std::vector<double> b(static_cast<std::size_t>(a.cols * 5));
  for (auto& v : b) v = small(rng);
  REQUIRE(interpret_spmm(g, b, 5) == interpret_spmm(f, b, 5));
  s.metadata["layout"] = "diagonal";
  REQUIRE_THROWS_WITH(from_safetensors(s, "f.safetensors"),
                      Catch::Contains("f.safetensors") && Catch::Contains("layout must be"));
  REQUIRE_THROWS_WITH(check_layout("col", "spmv"), Catch::Contains("for op spmm"));
  REQUIRE_THROWS_WITH(check_layout("colmajor", "spmm"), Catch::Contains("row or col"));
  REQUIRE_NOTHROW(check_layout("row", "spmv"));
}

TEST_CASE("the output-stationary kernel under every row order keeps the column-major product",
          "[graph][spmm][row-order]") {
  StationaryOptions so;
  so.tn = 3;    // n = 8 leaves a partial tile
  so.ctas = 2;  // fewer CTAs than strips: each walks several
  const Graph base = output_stationary(so);
  REQUIRE(base.ops[3].op == "SET_RESOURCES");
  CHECK(base.ops[3].params["threads"] == 1024);
  CHECK(base.ops[3].params["max_blocks"] == 2);
  const auto a = test::random_matrix(21, 150, 60, 0.05, 0.3);  // 30 % of rows empty
  for (int order = 0; order < 11; ++order) {
    Format f = design(with_row_order(base, order), a);
    f.layout = "col";
    INFO("order " << order);
    check_colmajor(f, a, 8, 1.0, 0.0, 0, 0, 400 + order);
    check_colmajor(f, a, 8, 0.5, 2.0, 2, 1, 500 + order);
  }
}

TEST_CASE("output_stationary refuses what the kernel cannot be", "[graph][spmm]") {
  StationaryOptions so;
  CHECK(output_stationary(so).ops[3].params["max_blocks"] == 1048576);  // 0: the default, no cap
  so.warps = 33;
  CHECK_THROWS_WITH(output_stationary(so), Catch::Contains("warps must be 1 to 32"));
  so.warps = 4;
  so.tn = 0;
  CHECK_THROWS_WITH(output_stationary(so), Catch::Contains("tn must be 1 to 32"));
  so.tn = 8;
  so.ctas = -1;
  CHECK_THROWS_WITH(output_stationary(so), Catch::Contains("ctas must be 0 or more"));
}
