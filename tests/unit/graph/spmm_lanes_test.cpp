// COL_TILE's lanes over columns: groups of lanes walk the same thread blocks, each lane on its own
// columns. The rules (which reductions compose), the graph text at the default, and the CPU
// interpreter's walk of the mapping against the fp64 reference for the warp-per-row graphs
// (csr-vector, and one thread block per warp block), csr-scalar, and row- and non-zero splits
// with atomics: n = 1 .. 1024, f64, f32 and f16 (fp32 accumulation), alpha/beta, beta = 0 over a
// C of NaNs, empty rows and rows longer than a warp.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>

#include "core/reference.hpp"
#include "graph/designer.hpp"
#include "graph/half.hpp"
#include "graph/interpreter.hpp"
#include "graph/spmm_graph.hpp"
#include "graph_test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::graph;

namespace {

Graph parse(const std::string& text) { return parse_graph(text, "test"); }

// SpMV graphs that lanes over columns serve (as_spmm adds COL_TILE).
struct Shape {
  const char* name;
  const char* ops;
};
const Shape kShapes[] = {
    {"csr-vector", R"([{"op": "COMPRESS"}, {"op": "BMW_ROW_BLOCK", "rows": 1},
      {"op": "SET_RESOURCES", "threads": 128}, {"op": "THREAD_TOTAL_RED"},
      {"op": "WARP_TOTAL_RED"}])"},
    {"warp-row", R"([{"op": "COMPRESS"}, {"op": "BMW_ROW_BLOCK", "rows": 1},
      {"op": "BMT_ROW_BLOCK", "rows": 1}, {"op": "THREAD_TOTAL_RED"}])"},
    {"csr-scalar", R"([{"op": "COMPRESS"}, {"op": "BMT_ROW_BLOCK", "rows": 1},
      {"op": "SET_RESOURCES", "threads": 64}, {"op": "THREAD_TOTAL_RED"}])"},
    {"row-split-atomic", R"([{"op": "COMPRESS"}, {"op": "BMW_ROW_BLOCK", "rows": 1},
      {"op": "BMT_NNZ_BLOCK", "nnz": 8}, {"op": "THREAD_TOTAL_RED"},
      {"op": "GMEM_ATOM_RED"}])"},
    {"nnz-split-atomic", R"([{"op": "COMPRESS"}, {"op": "BMT_NNZ_BLOCK", "nnz": 5},
      {"op": "THREAD_BITMAP_RED"}, {"op": "GMEM_ATOM_RED"}])"},
    // A group per run of 40 entries (a warp block of one thread block): runs cross rows, the
    // 70-entry row spans two runs, and a run ends inside a 32-entry load.
    {"nnz-split-warp", R"([{"op": "COMPRESS"}, {"op": "BMW_NNZ_BLOCK", "nnz": 40},
      {"op": "BMT_NNZ_BLOCK", "nnz": 40}, {"op": "THREAD_BITMAP_RED"}, {"op": "GMEM_ATOM_RED"}])"},
};

Graph spmv(const Shape& s) {
  Graph g = parse(std::string(R"({"ops": )") + s.ops + "}");
  g.name = s.name;
  return g;
}

// A matrix with empty rows, a row longer than a warp (70 entries), one entry rows and an
// explicit zero: rows x cols, deterministic.
Csr64 lanes_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<std::array<double, 3>> t;
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t len = r % 5 == 1 ? 0 : r == 2 ? std::min<std::int64_t>(cols, 70) : 1 + r % 9;
    if (r == 4) len = std::min<std::int64_t>(cols, 33);
    for (std::int64_t k = 0; k < len; ++k)
      t.push_back({static_cast<double>(r), static_cast<double>((k * 7 + r) % cols),
                   r == 6 && k == 0 ? 0.0 : u(rng)});
  }
  // Distinct (row, col): the step 7 walks a row's columns without repeats when gcd(7, cols) = 1.
  std::vector<std::tuple<std::int64_t, std::int64_t, double>> tr;
  for (const auto& e : t)
    tr.emplace_back(static_cast<std::int64_t>(e[0]), static_cast<std::int64_t>(e[1]), e[2]);
  return test::from_triples(rows, cols, tr);
}

std::vector<double> random_dense(std::mt19937_64& rng, std::int64_t count) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(count));
  for (auto& x : v) x = u(rng);
  return v;
}

double rounded(double v, const std::string& dtype) {
  if (dtype == "f32") return static_cast<double>(static_cast<float>(v));
  if (dtype == "f16") return half_to_float(float_to_half(static_cast<float>(v)));
  return v;
}

}  // namespace

TEST_CASE("COL_TILE lanes: its rules, and the default stays out of the graph", "[graph][spmm]") {
  const std::string head = R"({"op": "spmm", "ops": [{"op": "COMPRESS"}, {"op": "COL_TILE",
    "tn": 4, "vec": 4, "lanes": )";
  const auto with = [&](int lanes, const std::string& rest) {
    return parse(head + std::to_string(lanes) + "}, " + rest + "]}");
  };
  const std::string vector_row = R"({"op": "BMW_ROW_BLOCK", "rows": 1},
    {"op": "THREAD_TOTAL_RED"}, {"op": "WARP_TOTAL_RED"})";
  for (int lanes : {1, 2, 4, 8, 16, 32}) REQUIRE_NOTHROW(with(lanes, vector_row));
  REQUIRE_THROWS_WITH(with(3, vector_row), Catch::Contains("lanes must be 1, 2, 4, 8, 16 or 32"));
  REQUIRE_THROWS_WITH(with(64, vector_row), Catch::Contains("'lanes'"));
  // Reductions that pair lanes with thread blocks, and block-level ones, are refused.
  REQUIRE_THROWS_WITH(with(8, R"({"op": "BMT_NNZ_BLOCK", "nnz": 4}, {"op": "THREAD_BITMAP_RED"},
    {"op": "WARP_SEG_RED"}, {"op": "GMEM_ATOM_RED"})"),
                      Catch::Contains("WARP_SEG_RED pairs lanes with thread blocks"));
  REQUIRE_THROWS_WITH(with(32, R"({"op": "BMT_NNZ_BLOCK", "nnz": 4}, {"op": "THREAD_BITMAP_RED"},
    {"op": "WARP_BITMAP_RED"}, {"op": "GMEM_ATOM_RED"})"),
                      Catch::Contains("WARP_BITMAP_RED pairs lanes"));
  REQUIRE_THROWS_WITH(with(2, R"({"op": "BMTB_ROW_BLOCK", "max_nnz": 64},
    {"op": "BMT_NNZ_BLOCK", "nnz": 4}, {"op": "THREAD_BITMAP_RED"}, {"op": "SHMEM_OFFSET_RED"})"),
                      Catch::Contains("SHMEM_OFFSET_RED pairs lanes"));
  // Without lanes the reductions compose as before.
  REQUIRE_NOTHROW(with(1, R"({"op": "BMT_NNZ_BLOCK", "nnz": 4}, {"op": "THREAD_BITMAP_RED"},
    {"op": "WARP_SEG_RED"}, {"op": "GMEM_ATOM_RED"})"));
  // The default is implicit: graphs written before lanes existed print (and hash) as they did.
  const Graph plain = as_spmm(spmv(kShapes[0]), 4, 4);
  REQUIRE(describe(plain).find("lanes") == std::string::npos);
  REQUIRE(describe(as_spmm(spmv(kShapes[0]), 4, 4, 32)).find("lanes=32") != std::string::npos);
  REQUIRE(design(plain, test::random_matrix(1, 20, 20, 0.2)).parts[0].col_lanes == 1);
  // as_spmm refuses a graph the lanes do not compose with.
  const Graph seg = parse(R"({"ops": [{"op": "COMPRESS"}, {"op": "BMT_NNZ_BLOCK", "nnz": 4},
    {"op": "THREAD_BITMAP_RED"}, {"op": "WARP_SEG_RED"}, {"op": "GMEM_ATOM_RED"}]})");
  REQUIRE_THROWS_AS(as_spmm(seg, 4, 4, 8), GraphError);
}

TEST_CASE("the format binary keeps COL_TILE's lanes", "[graph][spmm]") {
  const auto a = lanes_matrix(50, 41, 3);
  const Format f = design(as_spmm(spmv(kShapes[0]), 2, 2, 16), a);
  REQUIRE(f.parts[0].col_lanes == 16);
  REQUIRE(f.parts[0].col_span() == 32);
  const auto st = to_safetensors(f, "test");
  REQUIRE(nlohmann::json::parse(st.metadata.at("parts"))[0]["col_tile"] ==
          nlohmann::json({2, 2, 16}));
  const Format g = from_safetensors(st, "test");
  REQUIRE(g.parts[0].col_lanes == 16);
  // Without lanes the tile is stored as before: [tn, vec].
  const Format p = design(as_spmm(spmv(kShapes[0]), 2, 2), a);
  REQUIRE(nlohmann::json::parse(to_safetensors(p, "test").metadata.at("parts"))[0]["col_tile"] ==
          nlohmann::json({2, 2}));
  auto bad = st;
  auto parts = nlohmann::json::parse(bad.metadata.at("parts"));
  parts[0]["col_tile"] = {2, 2, 12};
  bad.metadata["parts"] = parts.dump();
  REQUIRE_THROWS_WITH(from_safetensors(bad, "f.safetensors"), Catch::Contains("col_tile"));
}

TEST_CASE("lanes over columns give the reference product", "[graph][spmm]") {
  // n = 1024 on the small matrix only; the others on a matrix of 300 rows.
  const auto small = lanes_matrix(12, 75, 11);
  const auto big = lanes_matrix(300, 97, 12);
  std::mt19937_64 rng(77);
  const std::int64_t widths[] = {1, 3, 32, 33, 128, 129, 1024};
  // (tn, vec, lanes): a warp over columns, and groups of 8, 4 and 2 lanes.
  const int tiles[][3] = {{4, 4, 32}, {1, 1, 32}, {2, 2, 8}, {3, 4, 4}, {8, 4, 2}};
  int checked = 0;
  for (const auto& shape : kShapes)
    for (const auto& t : tiles)
      for (const char* dtype : {"f64", "f32", "f16"})
        for (const std::int64_t n : widths) {
          const Csr64& a0 = n == 1024 ? small : big;
          INFO(shape.name << " tn " << t[0] << " vec " << t[1] << " lanes " << t[2] << " " << dtype
                          << " n = " << n);
          DesignOptions opt;
          opt.dtype = dtype;
          const Format f = design(as_spmm(spmv(shape), t[0], t[1], t[2]), a0, opt);
          REQUIRE(f.parts[0].col_lanes == t[2]);
          // The reference of the values and B as the format stores them.
          Csr64 a = a0;
          for (auto& v : a.val) v = rounded(v, dtype);
          auto b = random_dense(rng, a.cols * n);
          for (auto& v : b) v = rounded(v, dtype);
          const auto ref = spmm_reference(a, b, n);
          // beta = 0 over a C of NaNs (store-only formats never read it; a missed row shows).
          REQUIRE(test::max_abs_diff(interpret_spmm(f, b, n), ref) <= 1e-12);
          // alpha/beta with B and C strided.
          const std::int64_t ldb = n + 1, ldc = n + 2;
          std::vector<double> bs(static_cast<std::size_t>(a.cols * ldb), 5.0);
          for (std::int64_t r = 0; r < a.cols; ++r)
            for (std::int64_t j = 0; j < n; ++j) bs[r * ldb + j] = b[r * n + j];
          auto c = random_dense(rng, a.rows * ldc);
          const auto c0 = c;
          interpret_spmm(f, bs, n, ldb, 1.5, -0.5, c, ldc);
          for (std::int64_t r = 0; r < a.rows; ++r)
            for (std::int64_t j = 0; j < ldc; ++j) {
              const double want =
                  j < n ? 1.5 * ref[r * n + j] - 0.5 * c0[r * ldc + j] : c0[r * ldc + j];
              REQUIRE(std::abs(c[r * ldc + j] - want) <= 1e-12);
            }
          ++checked;
        }
  REQUIRE(checked == 6 * 5 * 3 * 7);
}

TEST_CASE("lanes over columns by hand: a row longer than a warp", "[graph][spmm]") {
  // Row 1 holds 100 entries 1 .. 100 (rows 0 and 2 are empty), so csr-vector's 32 thread blocks
  // hold 3 or 4 entries each and every group walks all of its blocks: exactly 5050 per column
  // when each block is taken once, and 0 (stored, not NaN) in the empty rows.
  const auto a = test::from_triples(3, 100, [] {
    std::vector<std::tuple<std::int64_t, std::int64_t, double>> t;
    for (std::int64_t k = 0; k < 100; ++k) t.emplace_back(1, k, 1.0 + static_cast<double>(k));
    return t;
  }());
  const std::vector<double> b(100 * 2, 1.0);
  for (const int lanes : {1, 2, 32}) {
    const Format f = design(as_spmm(spmv(kShapes[0]), 1, 1, lanes), a);
    const auto c = interpret_spmm(f, b, 2);
    REQUIRE(c == std::vector<double>{0, 0, 5050, 5050, 0, 0});
  }
}
