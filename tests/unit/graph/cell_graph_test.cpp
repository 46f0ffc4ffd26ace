// CELL as operators: the graph's shape, a matrix worked by hand, and 240 random configurations
// (partitions, block factors, given or Alg. 3 widths, folded rows, empty rows and partitions,
// N = 1) designed and walked by the interpreter against the fp64 reference and cell::spmm_cell.
#include "graph/cell_graph.hpp"

#include <catch2/catch.hpp>
#include <random>

#include "core/cell.hpp"
#include "core/reference.hpp"
#include "graph/designer.hpp"
#include "graph/interpreter.hpp"
#include "graph_test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::graph;

TEST_CASE("a CELL graph by hand: buckets, padding and folded rows", "[graph][cell]") {
  // Rows of 1, 2, 3, 0 and 7 entries; one partition with W_max = 4: buckets 1, 2, 4, and the
  // 7-entry row folded into two pieces of 4 (one padded slot).
  std::vector<std::tuple<std::int64_t, std::int64_t, double>> t = {{0, 0, 1}, {1, 1, 2}, {1, 3, 3},
                                                                   {2, 0, 4}, {2, 2, 5}, {2, 4, 6}};
  for (std::int64_t c = 0; c < 7; ++c) t.emplace_back(4, c, 1.0 + static_cast<double>(c));
  const auto a = test::from_triples(5, 7, t);
  CellGraphOptions o;
  o.tn = 2;
  o.vec = 2;
  const Graph g = cell_graph(std::vector<std::int64_t>{4}, o);
  REQUIRE(g.op == "spmm");
  REQUIRE(g.ops[0].op == "COL_DIV");
  REQUIRE(g.ops[0].branches[0][0].params["bounds"] == nlohmann::json({2, 3, 5}));
  const Format f = design(g, a);
  REQUIRE(f.parts.size() == 4);       // widths 1, 2, 4 and the folded bucket
  CHECK(f.parts[0].nnz_stored == 2);  // row 0, and the empty row 3 padded to width 1
  CHECK(f.parts[1].nnz_stored == 2);  // row 1
  CHECK(f.parts[2].nnz_stored == 4);  // row 2 padded to width 4
  CHECK(f.parts[3].nnz_stored == 8);  // row 4: pieces of 4 and 3 + 1 padding
  CHECK(f.parts[3].atomic);
  CHECK_FALSE(f.parts[0].atomic);
  CHECK_FALSE(f.store_only);
  const std::vector<double> b = {1, 0, 0, 1, 1, 1, 2, 0, 0, 2, 1, -1, 3, 3};  // 7 x 2
  const auto want = spmm_reference(a, b, 2);
  CHECK(interpret_spmm(f, b, 2) == want);
  // Row 4, column 0: the sum of (c + 1) B[c][0] over c = 0..6.
  CHECK(want[8] == 1 * 1 + 2 * 0 + 3 * 1 + 4 * 2 + 5 * 0 + 6 * 1 + 7 * 3);
  // Bad widths are named.
  CHECK_THROWS_WITH(cell_graph(std::vector<std::int64_t>{3}, o), Catch::Contains("power of two"));
  CHECK_THROWS_WITH(cell_graph(std::vector<std::int64_t>{4, 4}, o),
                    Catch::Contains("one W_max per partition"));
}

TEST_CASE("random CELL configurations give the reference product", "[graph][cell]") {
  std::mt19937_64 rng(20261125);
  int checked = 0, folded = 0, empty_parts = 0, n1 = 0, tuned = 0;
  for (int i = 0; i < 240; ++i) {
    const std::int64_t rows = std::uniform_int_distribution<std::int64_t>(1, 90)(rng);
    const std::int64_t cols = std::uniform_int_distribution<std::int64_t>(1, 70)(rng);
    const double density = std::uniform_real_distribution<double>(0.01, 0.3)(rng);
    auto a = test::random_matrix(rng(), rows, cols, density, 0.25);
    CellGraphOptions o;
    o.partitions = std::uniform_int_distribution<int>(
        1, static_cast<int>(std::min<std::int64_t>(cols, i % 5 == 0 ? 70 : 6)))(rng);
    o.block_factor = 1 << std::uniform_int_distribution<int>(0, 2)(rng);
    o.tn = std::uniform_int_distribution<int>(1, 9)(rng);
    o.vec = 1 << std::uniform_int_distribution<int>(0, 2)(rng);
    o.threads = 32 << std::uniform_int_distribution<int>(0, 2)(rng);
    o.lanes = i % 3 == 1 ? 1 << std::uniform_int_distribution<int>(1, 5)(rng) : 1;
    const std::int64_t n = std::vector<std::int64_t>{1, 3, 8, 13}[i % 4];
    INFO("config " << i << ": " << rows << " x " << cols << ", P = " << o.partitions
                   << ", block factor " << o.block_factor << ", lanes " << o.lanes
                   << ", n = " << n);
    Graph g;
    std::vector<std::int64_t> widths;
    if (i % 2 == 0) {
      g = cell_graph(a, n, o);  // Alg. 3's widths
      ++tuned;
      const auto c = cell::build_tuned(a, o.partitions, n, o.block_factor);
      for (const auto& p : c.parts) widths.push_back(p.max_width);
    } else {
      // Widths below the natural ones fold the longer rows.
      for (int p = 0; p < o.partitions; ++p)
        widths.push_back(std::int64_t{1} << std::uniform_int_distribution<int>(0, 3)(rng));
      g = cell_graph(widths, o);
    }
    DesignOptions d;
    d.dtype = i % 3 == 0 ? "f32" : "f64";
    const Format f = design(g, a, d);
    std::vector<double> b(static_cast<std::size_t>(cols * n));
    for (auto& v : b) v = std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
    const auto ref = spmm_reference(a, b, n);
    const double tol = i % 3 == 0 ? 1e-5 : 1e-12;  // f32 values in f32 designs
    const auto got = interpret_spmm(f, b, n);
    if (i % 3 != 0) {
      REQUIRE(test::max_abs_diff(got, ref) <= tol);
      // The same product as the format side's definition with the same widths.
      const auto c = cell::build(a, o.partitions, widths, o.block_factor);
      REQUIRE(test::max_abs_diff(got, cell::spmm_cell(c, b, n)) <= 1e-12);
    } else {
      REQUIRE(test::max_abs_diff(got, ref) <= tol * 64);
    }
    ++checked;
    n1 += n == 1;
    for (const auto& p : f.parts) {
      folded += p.atomic && p.n_bmtb > 0;
      empty_parts += p.n_bmtb == 0;
    }
  }
  INFO(folded << " folded buckets, " << empty_parts << " empty parts");
  CHECK(checked == 240);
  CHECK(tuned == 120);
  CHECK(folded > 20);
  CHECK(empty_parts > 20);
  CHECK(n1 > 0);
}
