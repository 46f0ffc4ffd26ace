// The known formats, designed on shared and edge-case matrices and walked by the CPU
// interpreter, agree with the fp64 reference in every value type and index width.
#include <catch2/catch.hpp>
#include <filesystem>

#include "core/reference.hpp"
#include "graph/designer.hpp"
#include "graph/interpreter.hpp"
#include "graph_test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::graph;

namespace {

std::vector<Graph> known_graphs() {
  std::vector<Graph> v;
  const auto dir = std::filesystem::path(SPARSETUNE_TEST_DATA_DIR).parent_path().parent_path() /
                   "configs" / "graphs";
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) v.push_back(read_graph(f));
  return v;
}

double tolerance(const std::string& dtype) {
  return dtype == "f64" ? 1e-12 : dtype == "f32" ? 1e-5 : 1e-2;
}

}  // namespace

TEST_CASE("known formats compute y = A x on every matrix", "[graph]") {
  auto matrices = test::edge_matrices();
  for (const auto& m : test::shared_matrices()) matrices.push_back(m);
  for (const auto& g : known_graphs()) {
    for (const auto& [name, a] : matrices) {
      INFO(g.name << " on " << name);
      const auto x = test::test_x(a.cols);
      const auto ref = spmv_reference(a, x);
      for (const char* dtype : {"f64", "f32", "f16"}) {
        INFO(dtype);
        DesignOptions o;
        o.dtype = dtype;
        o.max_padding = 1000;  // ELL on rajat19 pads 72-fold; correctness is the point here
        const Format f = design(g, a, o);
        REQUIRE(f.parts.size() >= 1);
        const auto y = interpret(f, x);
        REQUIRE(relative_l2_error(y, ref) <= tolerance(dtype));
      }
      DesignOptions wide;
      wide.index_bits = 64;
      wide.max_padding = 1000;
      REQUIRE(relative_l2_error(interpret(design(g, a, wide), x), ref) <= 1e-12);
    }
  }
}

TEST_CASE("extraction splits store explicit zeros in regular parts", "[graph]") {
  // A tridiagonal 50x50 with a few scattered entries: the three diagonals go to part 0.
  std::vector<std::tuple<std::int64_t, std::int64_t, double>> t;
  for (std::int64_t i = 0; i < 50; ++i)
    for (std::int64_t d = -1; d <= 1; ++d)
      if (i + d >= 0 && i + d < 50 && (i * 3 + d) % 11 != 0) t.emplace_back(i, i + d, 1.0 + i + d);
  t.emplace_back(3, 40, 7.0);
  t.emplace_back(45, 2, -7.0);
  const Csr64 a = test::from_triples(50, 50, t);
  Graph g = graph_from_json(
      nlohmann::json::parse(R"({"ops":[{"op":"DIAG_SPLIT","min_fill":0.5,"branches":[
      [{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"BMT_PAD","to_max":true,"interleave":true},{"op":"THREAD_TOTAL_RED"}],
      [{"op":"COMPRESS"},{"op":"BMT_NNZ_BLOCK","nnz":2},{"op":"THREAD_BITMAP_RED"},{"op":"GMEM_ATOM_RED"}]]}]})"));
  const Format f = design(g, a);
  REQUIRE(f.parts.size() == 2);
  REQUIRE(f.parts[0].nnz_stored == 150);  // 3 diagonals x 50 slots (border slots padded)
  REQUIRE(f.parts[1].nnz_stored == 2);
  const auto x = test::test_x(50);
  REQUIRE(relative_l2_error(interpret(f, x), spmv_reference(a, x)) <= 1e-12);

  g = graph_from_json(
      nlohmann::json::parse(R"({"ops":[{"op":"DENSE_SPLIT","block":4,"min_fill":0.75,"branches":[
      [{"op":"COMPRESS"},{"op":"BMW_ROW_BLOCK","rows":1},{"op":"THREAD_TOTAL_RED"},{"op":"WARP_TOTAL_RED"}],
      [{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}]]}]})"));
  std::vector<std::tuple<std::int64_t, std::int64_t, double>> d;
  for (std::int64_t r = 4; r < 8; ++r)
    for (std::int64_t c = 8; c < 12; ++c)
      if (r * c != 45) d.emplace_back(r, c, 0.5 * r - c);
  d.emplace_back(0, 0, 1.0);
  d.emplace_back(13, 3, 2.0);
  const Csr64 b = test::from_triples(14, 12, d);
  const Format fb = design(g, b);
  REQUIRE(fb.parts[0].nnz_stored == 16);
  REQUIRE(fb.parts[0].pad_entries == 1);
  REQUIRE(fb.parts[1].nnz_stored == 2);
  const auto xb = test::test_x(12);
  REQUIRE(relative_l2_error(interpret(fb, xb), spmv_reference(b, xb)) <= 1e-12);
}

TEST_CASE("HYB puts row tails beyond the width in the second part", "[graph]") {
  const Csr64 a = test::random_matrix(3, 40, 90, 0.2);
  Graph g =
      graph_from_json(nlohmann::json::parse(R"({"ops":[{"op":"HYB_SPLIT","width":3,"branches":[
      [{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}],
      [{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}]]}]})"));
  const Format f = design(g, a);
  std::int64_t head = 0, long_rows = 0;
  for (std::int64_t r = 0; r < a.rows; ++r) {
    head += std::min<std::int64_t>(3, a.row_length(r));
    long_rows += a.row_length(r) > 3;
  }
  REQUIRE(f.parts[0].nnz_stored == head);
  REQUIRE(f.parts[1].nnz_stored == a.nnz() - head);
  REQUIRE(f.parts[1].rows == long_rows);
  const auto x = test::test_x(a.cols);
  REQUIRE(relative_l2_error(interpret(f, x), spmv_reference(a, x)) <= 1e-12);
}
