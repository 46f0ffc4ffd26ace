// BMTB_COL_SORT: a thread block's entries in column order, rows reduced in shared memory or in y.
// Checked against a hand-worked order, the fp64 reference, and the rules that keep it apart from
// operators that read rows off the entry order.
#include <catch2/catch.hpp>

#include "core/reference.hpp"
#include "graph/designer.hpp"
#include "graph/interpreter.hpp"
#include "graph/sptv_graph.hpp"
#include "graph_test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::graph;
using test::rule_broken;

namespace {

Graph sorted_graph(int rows, int nnz_per_thread, bool shared) {
  nlohmann::json ops = nlohmann::json::array(
      {{{"op", "COMPRESS"}},
       shared ? nlohmann::json{{"op", "BMTB_ROW_BLOCK"}, {"rows", rows}}
              : nlohmann::json{{"op", "BMTB_NNZ_BLOCK"}, {"nnz", rows}},
       {{"op", "BMTB_COL_SORT"}},
       {{"op", "BMT_NNZ_BLOCK"}, {"nnz", nnz_per_thread}, {"interleave", true}},
       {{"op", "THREAD_BITMAP_RED"}},
       shared ? nlohmann::json{{"op", "SHMEM_OFFSET_RED"}, {"max_rows", 4096}}
              : nlohmann::json{{"op", "GMEM_ATOM_RED"}}});
  Graph g = graph_from_json(
      {{"format", "sparsetune-graph"}, {"version", 1}, {"name", "sorted"}, {"ops", ops}});
  validate(g, "sorted");
  return g;
}

}  // namespace

TEST_CASE("BMTB_COL_SORT orders each thread block's entries by column, rows kept", "[graph]") {
  // Rows 0-2 form BMTB 0, rows 3-4 BMTB 1 (rows = 3).
  //   row 0: (0,3) 1  (0,5) 2      row 3: (3,4) 6  (3,0) 7
  //   row 1: (1,1) 3               row 4: (4,2) 8
  //   row 2: (2,0) 4  (2,5) 5
  const auto a = test::from_triples(5, 6,
                                    {{0, 3, 1.0},
                                     {0, 5, 2.0},
                                     {1, 1, 3.0},
                                     {2, 0, 4.0},
                                     {2, 5, 5.0},
                                     {3, 4, 6.0},
                                     {3, 0, 7.0},
                                     {4, 2, 8.0}});
  const auto m = apply_graph(sorted_graph(3, 1, true), a);
  REQUIRE(m.parts.size() == 1);
  std::vector<std::pair<std::int64_t, std::int64_t>> order;  // (row, col) in storage order
  for (const auto& e : m.parts[0].nz) order.emplace_back(e.row, e.col);
  // Ties keep the row order (row 0 before row 2 on column 5).
  const std::vector<std::pair<std::int64_t, std::int64_t>> want = {{2, 0}, {1, 1}, {0, 3}, {0, 5},
                                                                   {2, 5}, {3, 0}, {4, 2}, {3, 4}};
  REQUIRE(order == want);

  const std::vector<double> x = {1, 10, 100, 1000, 10000, 100000};
  // Row sums by hand: 1000 + 200000, 30, 4 + 500000, 60000 + 7, 800.
  const std::vector<double> y_hand = {201000, 30, 500004, 60007, 800};
  for (bool shared : {true, false}) {
    INFO((shared ? "SHMEM_OFFSET_RED" : "GMEM_ATOM_RED"));
    for (int per : {1, 2, 3}) {
      INFO(per << " entries a thread");
      REQUIRE(interpret(design(sorted_graph(3, per, shared), a), x) == y_hand);
    }
  }
}

TEST_CASE("column-sorted thread blocks compute y = A x", "[graph]") {
  auto matrices = test::edge_matrices();
  matrices.emplace_back("random 3000x2000", test::random_matrix(5, 3000, 2000, 0.004));
  for (const auto& [name, a] : matrices) {
    const auto x = test::test_x(a.cols);
    const auto ref = spmv_reference(a, x);
    for (bool shared : {true, false})
      for (int rows : {1, 7, 512}) {
        for (int per : {1, 4}) {
          INFO(name << ", " << (shared ? "rows " : "entries ") << rows << " a BMTB, " << per
                    << " a thread");
          for (const char* dtype : {"f64", "f32"}) {
            DesignOptions o;
            o.dtype = dtype;
            const auto f = design(sorted_graph(rows, per, shared), a, o);
            REQUIRE(relative_l2_error(interpret(f, x), ref) <= (o.dtype == "f64" ? 1e-12 : 1e-5));
          }
        }
      }
  }
}

TEST_CASE("BMTB_COL_SORT keeps out operators that read rows off the entry order", "[graph]") {
  const nlohmann::json compress = {{"op", "COMPRESS"}}, sort = {{"op", "BMTB_COL_SORT"}},
                       bmtb = {{"op", "BMTB_ROW_BLOCK"}, {"rows", 64}},
                       bmt = {{"op", "BMT_NNZ_BLOCK"}, {"nnz", 4}},
                       thread = {{"op", "THREAD_BITMAP_RED"}};
  CHECK_THAT(rule_broken({compress, sort, bmt, thread}),
             Catch::Contains("BMTB_COL_SORT needs a BMTB_*_BLOCK before it"));
  CHECK_THAT(rule_broken({compress, bmtb, bmt, sort, thread}),
             Catch::Contains("comes before finer levels are cut"));
  CHECK_THAT(rule_broken({compress, bmtb, sort, {{"op", "BMT_ROW_BLOCK"}, {"rows", 1}}, thread}),
             Catch::Contains("only *_NNZ_BLOCK without count_rows"));
  CHECK_THAT(rule_broken({compress, bmtb, sort, bmt, {{"op", "BMT_PAD"}}, thread}),
             Catch::Contains("are not padded"));
  CHECK_THAT(rule_broken({compress, bmtb, sort, bmt, thread, {{"op", "WARP_SEG_RED"}}}),
             Catch::Contains("BMTB_COL_SORT put them in column order"));
  CHECK_THAT(rule_broken({compress, bmtb, sort, sort, bmt, thread}),
             Catch::Contains("appears once per part"));
  CHECK(rule_broken({compress, bmtb, sort, bmt, thread, {{"op", "SHMEM_OFFSET_RED"}}}).empty());
  // SpMM keeps its row-ordered mappings.
  try {
    Graph g = graph_from_json({{"format", "sparsetune-graph"},
                               {"version", 1},
                               {"op", "spmm"},
                               {"ops", {compress, bmtb, sort}}});
    validate(g, "g.json");
    FAIL("an SpMM graph took BMTB_COL_SORT");
  } catch (const GraphError& e) {
    CHECK_THAT(e.what(), Catch::Contains("serves op spmv, sptv only"));
  }
}

TEST_CASE("BMTB_ROW_BLOCK's max_rows caps the rows that max_nnz packs", "[graph]") {
  // Rows 0-9 hold one entry each, row 10 holds 50.
  std::vector<std::tuple<std::int64_t, std::int64_t, double>> t;
  for (std::int64_t r = 0; r < 10; ++r) t.emplace_back(r, r, 1.0);
  for (std::int64_t c = 0; c < 50; ++c) t.emplace_back(10, c, 1.0);
  const auto a = test::from_triples(11, 50, t);
  Graph g = graph_from_json({{"format", "sparsetune-graph"},
                             {"version", 1},
                             {"ops",
                              {{{"op", "COMPRESS"}},
                               {{"op", "BMTB_ROW_BLOCK"}, {"max_nnz", 40}, {"max_rows", 3}},
                               {{"op", "THREAD_TOTAL_RED"}}}}});
  validate(g, "g");
  const auto m = apply_graph(g, a);
  std::vector<std::pair<std::int64_t, std::int64_t>> rows;  // (first, last) row of each BMTB
  for (const auto& b : m.parts[0].blocks[0]) rows.emplace_back(b.row_lo, b.row_hi);
  const std::vector<std::pair<std::int64_t, std::int64_t>> want = {
      {0, 2},
      {3, 5},
      {6, 8},
      {9, 9},
      {10, 10}};  // 3 rows a block, then row 10 alone: its 50 entries pass 40
  CHECK(rows == want);
  CHECK_THAT(rule_broken({{{"op", "COMPRESS"}},
                          {{"op", "BMTB_ROW_BLOCK"}, {"max_rows", 3}},
                          {{"op", "THREAD_TOTAL_RED"}}}),
             Catch::Contains("it needs max_nnz > 0"));
}

TEST_CASE("a column-sorted COO part's block: a thousandth of its entries, 4096 to 65536",
          "[graph][sptv]") {
  CHECK(sorted_coo_block_nnz(0) == 4096);
  CHECK(sorted_coo_block_nnz(8 * 1024 * 1024 - 1) == 4096);
  CHECK(sorted_coo_block_nnz(8 * 1024 * 1024) == 8192);
  CHECK(sorted_coo_block_nnz(10000000) == 8192);
  CHECK(sorted_coo_block_nnz(100000000) == 65536);
  CHECK(sorted_coo_block_nnz(std::int64_t{1} << 40) == 65536);
}
