// ROW_ORDER, the row permutations of output-stationary SpMM as a converting operator: its rules,
// the permutation it records (that of core/row_orders), and the product it leaves unchanged for
// every order, against the fp64 reference.
#include <catch2/catch.hpp>
#include <random>

#include "core/reference.hpp"
#include "core/row_orders.hpp"
#include "graph/designer.hpp"
#include "graph/graph.hpp"
#include "graph/interpreter.hpp"
#include "graph_test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::graph;
using namespace sparsetune::test;

namespace {

// A warp per row, two columns of B per thread (the output-stationary kernel's shape).
Graph ordered(int order, int warps, int window, int candidates = 0) {
  return parse_graph(R"({"op": "spmm", "ops": [{"op": "ROW_ORDER", "order": )" +
                         std::to_string(order) + R"(, "warps": )" + std::to_string(warps) +
                         R"(, "window": )" + std::to_string(window) + R"(, "candidates": )" +
                         std::to_string(candidates) + R"(},
      {"op": "COMPRESS"}, {"op": "COL_TILE", "tn": 2, "vec": 2},
      {"op": "BMW_ROW_BLOCK", "rows": 1}, {"op": "THREAD_TOTAL_RED"}, {"op": "WARP_TOTAL_RED"}]})",
                     "test");
}

std::vector<double> random_b(std::int64_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> b(static_cast<std::size_t>(count));
  for (auto& x : b) x = u(rng);
  return b;
}

}  // namespace

TEST_CASE("ROW_ORDER is a converting operator of SpMM graphs", "[graph][row_order]") {
  REQUIRE_NOTHROW(ordered(4, 32, 64));
  REQUIRE_THROWS_WITH(parse_graph(R"({"op": "spmv", "ops": [{"op": "ROW_ORDER", "order": 2},
    {"op": "COMPRESS"}, {"op": "BMW_ROW_BLOCK", "rows": 1}, {"op": "THREAD_TOTAL_RED"}]})",
                                  "test"),
                      Catch::Contains("ROW_ORDER serves op spmm"));
  REQUIRE_THROWS_WITH(parse_graph(R"({"op": "spmm", "ops": [{"op": "COMPRESS"},
    {"op": "ROW_ORDER", "order": 2}, {"op": "COL_TILE"}, {"op": "BMW_ROW_BLOCK", "rows": 1},
    {"op": "THREAD_TOTAL_RED"}]})",
                                  "test"),
                      Catch::Contains("before COMPRESS"));
  REQUIRE_THROWS_WITH(ordered(11, 32, 64), Catch::Contains("order"));
  REQUIRE_THROWS_WITH(ordered(6, 32, 64, 2), Catch::Contains("candidates"));
  // LPT when no order is named.
  const auto g = parse_graph(R"({"op": "spmm", "ops": [{"op": "ROW_ORDER"},
    {"op": "COMPRESS"}, {"op": "COL_TILE"}, {"op": "BMW_ROW_BLOCK", "rows": 1},
    {"op": "THREAD_TOTAL_RED"}]})",
                             "test");
  CHECK(g.ops[0].params.at("order") == 4);
}

TEST_CASE("ROW_ORDER records core/row_orders' permutation and keeps the product",
          "[graph][row_order]") {
  auto matrices = edge_matrices();
  // All rows equal; one row; rows of many lengths.
  std::vector<std::tuple<std::int64_t, std::int64_t, double>> same, one;
  for (std::int64_t r = 0; r < 70; ++r)
    for (std::int64_t c : {1, 5, 9}) same.emplace_back(r, c, 1.0 + r % 3);
  for (std::int64_t c = 0; c < 40; c += 3) one.emplace_back(0, c, 0.25 * c - 2);
  matrices.emplace_back("all rows equal", from_triples(70, 12, same));
  matrices.emplace_back("one row", from_triples(1, 40, one));
  matrices.emplace_back("random 300x200", random_matrix(5, 300, 200, 0.04, 0.2));
  int checked = 0;
  for (const auto& [name, a] : matrices)
    for (int order = 0; order < static_cast<int>(row_orders::all_orders().size()); ++order)
      for (auto [warps, window, candidates] :
           {std::tuple{32, 64, 0}, std::tuple{4, 3, 0}, std::tuple{4, 3, 1}}) {
        INFO(name << ", order " << row_orders::name(row_orders::all_orders()[order]) << ", "
                  << warps << " warps, window " << window << ", candidates " << candidates);
        const Format f = design(ordered(order, warps, window, candidates), a);
        row_orders::Options o;
        o.warps = warps;
        o.window = window;
        o.candidates =
            candidates ? row_orders::Candidates::shared_lines : row_orders::Candidates::matrix;
        const auto perm = row_orders::row_order(a, row_orders::all_orders()[order], o);
        if (a.rows > 0) {
          REQUIRE(f.parts.size() == 1);
          REQUIRE(f.parts[0].has(Arr::origin_row));
          CHECK(f.parts[0].array(Arr::origin_row).ints == perm);
        }
        for (std::int64_t n : {1, 5}) {
          const auto b = random_b(a.cols * n, 3 + n);
          const auto c = interpret_spmm(f, b, n);
          const auto ref = spmm_reference(a, b, n);
          REQUIRE(c.size() == ref.size());
          for (std::size_t i = 0; i < c.size(); ++i) REQUIRE(c[i] == Approx(ref[i]).margin(1e-12));
        }
        ++checked;
      }
  CHECK(checked == static_cast<int>(matrices.size()) * 11 * 3);
}
