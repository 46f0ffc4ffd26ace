// SpMM as a dimension of the IR: COL_TILE's rules, hand values, and random SpMM graphs walked by
// the CPU interpreter against the fp64 reference (empty rows, N = 1, N not a multiple of tn,
// rectangular matrices, alpha/beta).
#include "graph/spmm_graph.hpp"

#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <set>

#include "core/reference.hpp"
#include "graph/designer.hpp"
#include "graph/half.hpp"
#include "graph/interpreter.hpp"
#include "graph/random_graph.hpp"
#include "graph_test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::graph;

namespace {

Graph parse(const std::string& text) { return parse_graph(text, "test"); }

const char* kCsrVectorSpmm = R"({"op": "spmm", "ops": [{"op": "COMPRESS"},
  {"op": "COL_TILE", "tn": 2, "vec": 2}, {"op": "BMW_ROW_BLOCK", "rows": 1},
  {"op": "THREAD_TOTAL_RED"}, {"op": "WARP_TOTAL_RED"}]})";

std::vector<double> random_dense(std::mt19937_64& rng, std::int64_t count) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(count));
  for (auto& x : v) x = u(rng);
  return v;
}

}  // namespace

TEST_CASE("COL_TILE serves spmm only and every spmm part needs one", "[graph][spmm]") {
  REQUIRE_NOTHROW(parse(kCsrVectorSpmm));
  REQUIRE_THROWS_WITH(parse(R"({"op": "spmm", "ops": [{"op": "COMPRESS"},
    {"op": "BMW_ROW_BLOCK", "rows": 1}, {"op": "THREAD_TOTAL_RED"}]})"),
                      Catch::Contains("every spmm part needs COL_TILE"));
  REQUIRE_THROWS_WITH(parse(R"({"op": "spmv", "ops": [{"op": "COMPRESS"},
    {"op": "COL_TILE"}, {"op": "BMW_ROW_BLOCK", "rows": 1}, {"op": "THREAD_TOTAL_RED"}]})"),
                      Catch::Contains("COL_TILE serves op spmm only, not spmv"));
  REQUIRE_THROWS_WITH(parse(R"({"op": "spmm", "ops": [{"op": "COMPRESS"},
    {"op": "COL_TILE", "tn": 6, "vec": 3}, {"op": "BMW_ROW_BLOCK", "rows": 1},
    {"op": "THREAD_TOTAL_RED"}]})"),
                      Catch::Contains("vec must be 1, 2 or 4"));
  REQUIRE_THROWS_WITH(parse(R"({"op": "spmm", "ops": [{"op": "COMPRESS"},
    {"op": "COL_TILE", "tn": 64}, {"op": "BMW_ROW_BLOCK", "rows": 1},
    {"op": "THREAD_TOTAL_RED"}]})"),
                      Catch::Contains("'tn'"));
  // Tensor operators stay out of SpMM graphs.
  REQUIRE_THROWS_WITH(parse(R"({"op": "spmm", "ops": [{"op": "DENSE_FILL"}, {"op": "COMPRESS"},
    {"op": "COL_TILE"}, {"op": "BMW_ROW_BLOCK", "rows": 1}, {"op": "THREAD_TOTAL_RED"}]})"),
                      Catch::Contains("DENSE_FILL serves op sptv only"));
  // COL_TILE is a mapping operator: after COMPRESS, before the reductions.
  REQUIRE_THROWS_WITH(parse(R"({"op": "spmm", "ops": [{"op": "COL_TILE"}, {"op": "COMPRESS"},
    {"op": "BMW_ROW_BLOCK", "rows": 1}, {"op": "THREAD_TOTAL_RED"}]})"),
                      Catch::Contains("mapping operators follow COMPRESS"));
}

TEST_CASE("as_spmm puts a COL_TILE in every part of a SpMV graph", "[graph][spmm]") {
  const Graph g = parse(R"({"ops": [{"op": "ROW_DIV", "count": 2, "branches": [
    [{"op": "COMPRESS"}, {"op": "BMT_ROW_BLOCK", "rows": 1}, {"op": "THREAD_TOTAL_RED"}],
    [{"op": "COMPRESS"}, {"op": "BMW_ROW_BLOCK", "rows": 1}, {"op": "THREAD_TOTAL_RED"},
     {"op": "WARP_TOTAL_RED"}]]}]})");
  const Graph s = as_spmm(g, 8, 4);
  REQUIRE(s.op == "spmm");
  for (const auto& b : s.ops[0].branches) {
    REQUIRE(b[1].op == "COL_TILE");
    REQUIRE(b[1].params["tn"] == 8);
    REQUIRE(b[1].params["vec"] == 4);
  }
  // Again with another tile: replaced, not added.
  const Graph t = as_spmm(s, 2, 1);
  REQUIRE(t.ops[0].branches[0].size() == s.ops[0].branches[0].size());
  REQUIRE(t.ops[0].branches[0][1].params["tn"] == 2);
}

TEST_CASE("SpMM by hand: C = alpha A B + beta C with N not a multiple of tn", "[graph][spmm]") {
  // A = [1 0 2; 0 0 0; 0 3 0; 4 0 5], B (3 x 3) = rows [1 2 3], [4 5 6], [7 8 9].
  const auto a = test::from_triples(4, 3, {{0, 0, 1}, {0, 2, 2}, {2, 1, 3}, {3, 0, 4}, {3, 2, 5}});
  const std::vector<double> b = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::vector<double> expect = {15, 18, 21, 0, 0, 0, 12, 15, 18, 39, 48, 57};
  for (const char* dtype : {"f64", "f32"}) {
    DesignOptions opt;
    opt.dtype = dtype;
    const Format f = design(parse(kCsrVectorSpmm), a, opt);
    REQUIRE(f.op == "spmm");
    REQUIRE(f.parts[0].col_tile == 2);
    REQUIRE(f.parts[0].kernel == "sparsetune_spmm_p0");
    REQUIRE(interpret_spmm(f, b, 3) == expect);
    // alpha = 2, beta = -1 on a C of stride 4 whose padding column is left alone.
    std::vector<double> c(16, 1.0);
    c[3] = c[7] = c[11] = c[15] = 99.0;
    interpret_spmm(f, b, 3, 3, 2.0, -1.0, c, 4);
    for (std::int64_t r = 0; r < 4; ++r) {
      for (std::int64_t j = 0; j < 3; ++j) REQUIRE(c[r * 4 + j] == 2.0 * expect[r * 3 + j] - 1.0);
      REQUIRE(c[r * 4 + 3] == 99.0);
    }
    // beta = 0 never reads C: NaN there is harmless.
    std::vector<double> nan(12, std::numeric_limits<double>::quiet_NaN());
    interpret_spmm(f, b, 3, 3, 1.0, 0.0, nan, 3);
    REQUIRE(nan == expect);
  }
  // A tile that vec does not divide loads with the widest width that divides it.
  for (const auto& [tn, vec, want] :
       std::vector<std::array<int, 3>>{{6, 4, 2}, {3, 4, 1}, {8, 4, 4}}) {
    const Format t = design(as_spmm(parse(kCsrVectorSpmm), tn, vec), a);
    REQUIRE(t.parts[0].col_tile == tn);
    REQUIRE(t.parts[0].col_vec == want);
  }
  // N = 1 is SpMV.
  const Format f = design(parse(kCsrVectorSpmm), a);
  REQUIRE(interpret_spmm(f, {1, 4, 7}, 1) == std::vector<double>{15, 0, 12, 39});
  REQUIRE_THROWS_WITH(interpret_spmm(f, {1, 4}, 1), Catch::Contains("B holds 2 values"));
  // f16: values and B in fp16, accumulation in fp32 on the GPU (fp64 here, from the same
  // rounded values): exactly the reference of the rounded A and B.
  DesignOptions half;
  half.dtype = "f16";
  const Format h = design(parse(kCsrVectorSpmm), a, half);
  const std::vector<double> bh = {1.0009765625, 2, 3, 4, 5, 6, 7, 8, 9.0078125};  // in fp16
  auto ah = a;
  for (auto& v : ah.val) v = half_to_float(float_to_half(static_cast<float>(v)));
  REQUIRE(interpret_spmm(h, bh, 3) == spmm_reference(ah, bh, 3));
}

TEST_CASE("the format binary keeps SpMM's column tile", "[graph][spmm]") {
  const auto a = test::random_matrix(3, 40, 30, 0.1);
  const Format f = design(as_spmm(parse(kCsrVectorSpmm), 4, 2), a);
  const Format g = from_safetensors(to_safetensors(f, "test"), "test");
  REQUIRE(g.op == "spmm");
  REQUIRE(g.parts[0].col_tile == 4);
  REQUIRE(g.parts[0].col_vec == 2);
  std::mt19937_64 rng(5);
  const auto b = random_dense(rng, a.cols * 5);
  REQUIRE(interpret_spmm(g, b, 5) == interpret_spmm(f, b, 5));
  // A damaged tile is named; an SpMM format without one is refused.
  for (const nlohmann::json& bad :
       {nlohmann::json({0, 1}), nlohmann::json({4, 3}), nlohmann::json()}) {
    auto s = to_safetensors(f, "test");
    auto parts = nlohmann::json::parse(s.metadata.at("parts"));
    if (bad.is_null())
      parts[0].erase("col_tile");
    else
      parts[0]["col_tile"] = bad;
    s.metadata["parts"] = parts.dump();
    REQUIRE_THROWS_WITH(from_safetensors(s, "f.safetensors"),
                        Catch::Contains("f.safetensors") && Catch::Contains("col_tile"));
  }
}

TEST_CASE("random valid SpMM graphs give the reference product", "[graph][spmm]") {
  auto matrices = test::edge_matrices();  // empty rows, no entries, 0 x 0, one long row
  const auto& shared = test::shared_matrices();
  matrices.push_back(shared[0]);
  matrices.push_back(shared[1]);
  matrices.push_back({"random 90x20", test::random_matrix(13, 90, 20, 0.2, 0.25)});
  RandomGraphOptions ro;
  ro.op = "spmm";
  std::mt19937_64 rng(20261125);
  const std::int64_t widths[] = {1, 2, 3, 5, 8, 17, 33};
  int fully_valid = 0, checked = 0, stores = 0, ragged = 0, n1 = 0;
  std::set<std::string> ops_seen;
  for (int i = 0; i < 1500 && fully_valid < 210; ++i) {
    const Graph g = random_graph(rng, ro);
    REQUIRE(g.op == "spmm");
    const std::int64_t n = widths[i % 7];
    bool all = true;
    for (const auto& [name, a] : matrices) {
      INFO("graph " << i << ": " << describe(g) << " on " << name << ", n = " << n);
      Format f;
      try {
        f = design(g, a);
      } catch (const DesignError& e) {
        REQUIRE(std::string(e.what()).find("rule:") != std::string::npos);
        all = false;
        continue;
      }
      ++checked;
      stores += f.store_only;
      for (const auto& p : f.parts) ragged += n % p.col_tile != 0;
      n1 += n == 1;
      const auto b = random_dense(rng, a.cols * n);
      const auto ref = spmm_reference(a, b, n);
      // Store-only formats start from NaNs: a missed or twice-written row would show.
      REQUIRE(test::max_abs_diff(interpret_spmm(f, b, n), ref) <= 1e-12);
      // alpha/beta, with C strided (ldc = n + 3) and B strided (ldb = n + 1).
      std::vector<double> bs(static_cast<std::size_t>(a.cols * (n + 1)), 7.0);
      for (std::int64_t r = 0; r < a.cols; ++r)
        for (std::int64_t j = 0; j < n; ++j) bs[r * (n + 1) + j] = b[r * n + j];
      auto c = random_dense(rng, a.rows * (n + 3));
      const auto c0 = c;
      interpret_spmm(f, bs, n, n + 1, 0.5, -2.0, c, n + 3);
      for (std::int64_t r = 0; r < a.rows; ++r)
        for (std::int64_t j = 0; j < n + 3; ++j) {
          const double want =
              j < n ? 0.5 * ref[r * n + j] - 2.0 * c0[r * (n + 3) + j] : c0[r * (n + 3) + j];
          REQUIRE(std::abs(c[r * (n + 3) + j] - want) <= 1e-12);
        }
    }
    if (all) {
      ++fully_valid;
      std::function<void(const std::vector<OpNode>&)> collect =
          [&](const std::vector<OpNode>& ops) {
            for (const auto& o : ops) {
              ops_seen.insert(o.op);
              for (const auto& br : o.branches) collect(br);
            }
          };
      collect(g.ops);
    }
  }
  INFO(checked << " designs, " << stores << " store-only, " << ragged << " ragged tiles");
  REQUIRE(fully_valid >= 200);
  REQUIRE(stores >= checked / 10);
  REQUIRE(checked - stores >= checked / 10);
  REQUIRE(ragged > 0);
  REQUIRE(n1 > 0);
  REQUIRE(ops_seen.count("COL_TILE") == 1);
  REQUIRE(ops_seen.size() >= 20);
}

TEST_CASE("with_row_order puts one ROW_ORDER first, made for the block's warps",
          "[graph][spmm][row-order]") {
  const auto dir = std::filesystem::path(SPARSETUNE_TEST_DATA_DIR).parent_path().parent_path() /
                   "configs" / "graphs";
  graph::Graph g = graph::read_graph((dir / "csr-vector.json").string());
  g = graph::as_spmm(g, 4, 4);
  const auto a = graph::with_row_order(g, 6);
  REQUIRE(a.ops.size() == g.ops.size() + 1);
  CHECK(a.ops[0].op == "ROW_ORDER");
  CHECK(a.ops[0].params["order"] == 6);
  CHECK(a.ops[0].params["warps"] == 4);  // csr-vector: 128 threads
  // A Hamming search takes its candidates from shared lines unless told otherwise; the matrix
  // rule is the parameter's default, 0 (as graphs were written before shared lines).
  CHECK(a.ops[0].params["candidates"] == 1);
  CHECK(a.name == "csr-vector-cta-aware-shared-lines");
  const auto m = graph::with_row_order(g, 6, row_orders::Candidates::matrix);
  CHECK(m.ops[0].params.value("candidates", 0) == 0);
  CHECK(m.name == "csr-vector-cta-aware");
  const auto b = graph::with_row_order(a, 1);  // replaces, never stacks
  CHECK(b.ops.size() == a.ops.size());
  CHECK(b.ops[0].params["order"] == 1);
  // DCSR ignores the rule: the default and no suffix.
  CHECK(b.ops[0].params.value("candidates", 0) == 0);
  // The name says the order it has now, not every order it had.
  CHECK(b.name == "csr-vector-dcsr");
  CHECK(graph::with_row_order(m, 2).name == "csr-vector-plain");
  CHECK(graph::with_row_order(b, 6).name == "csr-vector-cta-aware-shared-lines");
  // A name that does not end with its order's suffix (renamed since) is kept whole.
  auto renamed = a;
  renamed.name = "mine";
  CHECK(graph::with_row_order(renamed, 3).name == "mine-flipped");
  CHECK_THROWS_AS(graph::with_row_order(g, 11), graph::GraphError);
  CHECK_THROWS_AS(graph::with_row_order(g, -1), graph::GraphError);
}
