// MatXtract in the IR: CRUX_SPLIT divides a matrix into its crux (hot) and the rest (cold);
// TC_COMPRESS stores the hot part for tensor cores (dense unfolding or sparse encoding) and
// TC_MMA_F64 multiplies it with mma.sync m8n8k4, whose CPU model works register by register.
// Checked by hand, against the fp64 reference on 240 random configurations (edge cases included),
// under alpha/beta, through the format binary, and for the rules the operators state.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>

#include "core/crux.hpp"
#include "core/reference.hpp"
#include "graph/crux_graph.hpp"
#include "graph/designer.hpp"
#include "graph/half.hpp"
#include "graph/interpreter.hpp"
#include "graph/random_graph.hpp"
#include "graph/tensor_core.hpp"
#include "graph_test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::graph;

namespace {

Graph parse(const char* ops) {
  return graph_from_json(nlohmann::json::parse(std::string(R"({"ops":)") + ops + "}"));
}

std::string rule_of(const char* ops) {
  try {
    Graph g = parse(ops);
    validate(g);
  } catch (const GraphError& e) {
    return e.what();
  }
  return "";
}

// |A|·|x| per row: the scale of each row's rounding error.
std::vector<double> abs_product(const Csr64& a, const std::vector<double>& x) {
  std::vector<double> out(a.rows, 0.0);
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (auto k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k)
      out[r] += std::abs(a.val[k] * x[a.col_idx[k]]);
  return out;
}

// 4 x 4: columns 0 and 1 are the longest; rows 0 and 2 hold most of their entries.
Csr64 small() {
  return test::from_triples(
      4, 4,
      {{0, 0, 1.0}, {0, 1, 2.0}, {0, 3, 3.0}, {1, 0, 4.0}, {2, 0, 5.0}, {2, 1, 6.0}, {3, 2, 7.0}});
}

}  // namespace

TEST_CASE("the m8n8k4 fp64 model holds A B + C in the PTX fragment layout", "[graph][crux]") {
  LaneValues a{}, b{};
  for (int l = 0; l < 32; ++l) {
    a[l] = l / 4 * 4 + l % 4 + 1;        // A[r][k] = 4r + k + 1 (lane 4r + k)
    b[l] = (l % 4 + 1) * (l / 4 + 1.0);  // B[k][n] = (k + 1)(n + 1) (lane 4n + k)
  }
  LaneAccumulators d{};
  for (int l = 0; l < 32; ++l) d[l] = {0.5, -1.0};
  mma_m8n8k4_f64(a, b, d);
  REQUIRE(d[0][0] == 30.5);  // A[0][:] = 1..4, B[:][0] = 1..4: 1 + 4 + 9 + 16, plus C = 0.5
  REQUIRE(d[0][1] == 59.0);  // B[:][1] = 2, 4, 6, 8: 60, plus C = -1
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < 2; ++i) {
      const int r = l / 4, n = 2 * (l % 4) + i;
      double want = i == 0 ? 0.5 : -1.0;
      for (int k = 0; k < 4; ++k) want += (4.0 * r + k + 1) * ((k + 1.0) * (n + 1.0));
      REQUIRE(d[l][i] == want);
    }
  for (int r = 0; r < 8; ++r) {  // the diagonal's owner holds row r and column r
    REQUIRE(diagonal_lane(r) / 4 == r);
    REQUIRE(2 * (diagonal_lane(r) % 4) + diagonal_register(r) == r);
  }
}

TEST_CASE("the m16n8k8 fp16 model holds A B + C in fp32, in the PTX fragment layout",
          "[graph][crux]") {
  HalfFragmentA a{};
  HalfFragmentB b{};
  // A[m][k] = m - k (rows 8-15 too), B[k][n] = k + n + 1, all exact in fp16.
  auto A = [](int m, int k) { return static_cast<double>(m - k); };
  auto B = [](int k, int n) { return static_cast<double>(k + n + 1); };
  for (int l = 0; l < 32; ++l) {
    const int g = l / 4, t = l % 4;
    for (int i = 0; i < 2; ++i) {
      a[l][i] = A(g, 2 * t + i);
      a[l][2 + i] = A(g + 8, 2 * t + i);
      b[l][i] = B(2 * t + i, g);
    }
  }
  FloatAccumulators d{};
  for (int l = 0; l < 32; ++l) d[l] = {0.25, 0.5, 0.75, 1.0};
  mma_m16n8k8_f16_f32(a, b, d);
  // D[0][0] = sum_k (0 - k)(k + 1) = -(0 + 2 + 6 + 12 + 20 + 30 + 42 + 56) = -168, plus 0.25.
  REQUIRE(d[0][0] == -167.75);
  for (int l = 0; l < 32; ++l)
    for (int j = 0; j < 4; ++j) {
      const int m = l / 4 + 8 * (j / 2), n = 2 * (l % 4) + j % 2;
      double want = 0.25 * (j + 1);
      for (int k = 0; k < 8; ++k) want += A(m, k) * B(k, n);
      REQUIRE(d[l][j] == want);
    }
}

TEST_CASE("CRUX_SPLIT and both TC encodings worked out by hand", "[graph][crux]") {
  // nnz 7; tau_c = 0.5 needs 4 entries: columns 0 (3) and 1 (2). Local lengths 2, 1, 2, 0;
  // tau_r = 0.4 needs 3: rows 0 and 2. Hot: (0,0) (0,1) (2,0) (2,1); cold: the other three.
  const Csr64 a = small();
  const std::vector<double> x = {1, 2, 3, 4};
  const std::vector<double> want = {17, 4, 17, 21};
  SECTION("dense unfolding: one chunk, one 8 x 4 block, bits 0, 1, 4, 5") {
    const Format f = design(crux_graph(0.5, 0.4, csr_vector_ops(), 1), a);
    REQUIRE(f.parts.size() == 2);
    const auto& hot = f.parts[0];
    REQUIRE(hot.array(Arr::origin_row).ints == std::vector<std::int64_t>{0, 2});
    REQUIRE(hot.n_tc == 1);
    REQUIRE(hot.array(Arr::tc_bit).ints == std::vector<std::int64_t>{0b110011});
    REQUIRE(hot.array(Arr::tc_col).ints == std::vector<std::int64_t>{0, 1, 1, 1});
    REQUIRE(hot.array(Arr::tc_ptr).ints == std::vector<std::int64_t>{0, 4});
    REQUIRE(hot.array(Arr::nz_val).reals == std::vector<double>{1, 2, 5, 6});
    REQUIRE(hot.n_bmw == 1);
    REQUIRE(hot.n_bmt == 32);
    REQUIRE_FALSE(hot.has(Arr::nz_col));
    REQUIRE(f.parts[1].rows == 4);
    REQUIRE_FALSE(f.store_only);  // rows 0 and 2 are written by both parts
    REQUIRE(interpret(f, x) == want);
  }
  SECTION("sparse encoding: the chunk's rows padded to 4 slots, one block of 32 values") {
    const Format f = design(crux_graph(0.5, 0.4, csr_vector_ops(), 2), a);
    const auto& hot = f.parts[0];
    REQUIRE(hot.nnz_stored == 32);
    REQUIRE(hot.pad_entries == 28);
    const auto& v = hot.array(Arr::nz_val).reals;
    REQUIRE(v[0] == 1);  // row 0 (matrix row 0): slots 0, 1
    REQUIRE(v[1] == 2);
    REQUIRE(v[4] == 5);  // row 1 (matrix row 2): slots 4, 5
    REQUIRE(v[5] == 6);
    REQUIRE(interpret(f, x) == want);
  }
  SECTION("the storage criterion chooses the sparse encoding for so few entries") {
    const Format f = design(crux_graph(0.5, 0.4), a);
    REQUIRE_FALSE(f.parts[0].has(Arr::tc_bit));
    REQUIRE(interpret(f, x) == want);
  }
  SECTION("fp16 blocks of 8 x 8: one chunk, bits 0, 1, 8, 9 of the first word") {
    DesignOptions o;
    o.dtype = "f16";
    for (int encoding : {1, 2}) {
      const Format f = design(crux_graph(0.5, 0.4, csr_vector_ops(), encoding, 8), a, o);
      const auto& hot = f.parts[0];
      if (encoding == 1) {
        REQUIRE(hot.n_tc == 1);
        REQUIRE(hot.tc_w == 8);
        REQUIRE(hot.array(Arr::tc_bit).ints == std::vector<std::int64_t>{0x303, 0});
        REQUIRE(hot.array(Arr::tc_col).ints == std::vector<std::int64_t>{0, 1, 1, 1, 1, 1, 1, 1});
      } else {
        REQUIRE(hot.nnz_stored == 64);  // rows padded to 8 slots
        const auto& v = hot.array(Arr::nz_val).reals;
        REQUIRE(v[0] == 1);  // lane 0: slots (0, 0) and (0, 1), 32 apart
        REQUIRE(v[32] == 2);
        REQUIRE(v[4] == 5);  // lane 4: row 1 (matrix row 2)
        REQUIRE(v[36] == 6);
      }
      REQUIRE(interpret(f, x) == want);
    }
  }
  SECTION("alpha and beta: rows shared by hot and cold parts add up once") {
    const Format f = design(crux_graph(0.5, 0.4, csr_vector_ops(), 1), a);
    std::vector<double> y = {1, 1, 1, 1};
    interpret(f, x, 2.0, -1.0, y);
    REQUIRE(y == std::vector<double>{33, 7, 33, 41});
  }
}

TEST_CASE("CRUX_SPLIT graphs equal the fp64 reference on 240 random configurations",
          "[graph][crux]") {
  std::mt19937_64 rng(20261125);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const auto edges = test::edge_matrices();
  const std::vector<std::vector<OpNode>> colds = {
      csr_vector_ops(),
      parse(R"([{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}])").ops,
      parse(R"([{"op":"COMPRESS"},{"op":"BMT_NNZ_BLOCK","nnz":4},{"op":"THREAD_BITMAP_RED"},
                {"op":"WARP_SEG_RED"},{"op":"GMEM_ATOM_RED"}])")
          .ops};
  RandomGraphOptions flat;
  flat.max_div_depth = 0;  // sub-graphs without a further division
  int dense = 0, sparse = 0, hot_empty = 0, all_hot = 0, cuda_hot = 0, random_cold = 0;
  int owned = 0, owned_split = 0;
  for (int i = 0; i < 240; ++i) {
    // Matrices: the edge cases (empty, no entries, one column, a long row), smaller than one TC
    // block, rectangular both ways, with empty rows and columns.
    Csr64 a;
    std::string what;
    if (i % 6 == 0) {
      what = edges[(i / 6) % edges.size()].first;
      a = edges[(i / 6) % edges.size()].second;
    } else {
      const std::int64_t rows = i % 5 == 1 ? 1 + i % 7 : 1 + static_cast<std::int64_t>(u(rng) * 90);
      const std::int64_t cols = i % 5 == 2 ? 1 + i % 3 : 1 + static_cast<std::int64_t>(u(rng) * 90);
      a = test::random_matrix(1000 + i, rows, cols, 0.02 + 0.3 * u(rng), 0.3 * u(rng));
      what = "random " + std::to_string(rows) + "x" + std::to_string(cols);
    }
    double tau_c = u(rng), tau_r = tau_c * u(rng);
    switch (i % 8) {
      case 0:
        tau_r = 0.0;  // hot part empty
        break;
      case 1:
        tau_c = tau_r = 1.0;  // all hot
        break;
      case 2:
        tau_r = tau_c;
        break;
      case 3:
        tau_c = 1.0;
        break;
      default:
        break;
    }
    const int encoding = static_cast<int>(i % 3);
    std::vector<OpNode> cold = colds[i % colds.size()];
    if (i % 7 == 3) {
      cold = random_graph(rng, flat).ops;
      ++random_cold;
    }
    // Every other configuration with the hot part owning its rows (own_rows).
    const bool own = (i / 2) % 2 == 1;
    if (own) ++owned;
    Graph g = crux_graph(tau_c, tau_r, cold, encoding, 4, own);
    if (i % 11 == 5) {  // the hot part on CUDA cores: any sub-graph serves either part
      g.ops[0].branches[0] = colds[(i / 11) % colds.size()];
      ++cuda_hot;
    }
    if (i % 13 == 4) {  // 256 threads for the hot part, set once
      auto& hot_ops = g.ops[0].branches[0];
      const auto set = std::find_if(hot_ops.begin(), hot_ops.end(),
                                    [](const OpNode& n) { return n.op == "SET_RESOURCES"; });
      if (set != hot_ops.end())
        set->params["threads"] = 256;
      else
        hot_ops.insert(hot_ops.begin() + 1, {"SET_RESOURCES", {{"threads", 256}}, {}});
    }
    INFO("config " << i << ": " << what << ", " << describe(g));
    Format f;
    try {
      f = design(g, a);
    } catch (const DesignError& e) {  // a random cold sub-graph may break a data rule
      REQUIRE(i % 7 == 3);
      REQUIRE(std::string(e.what()).find("rule:") != std::string::npos);
      continue;
    }
    const auto split = crux::crux_split(a, tau_c, tau_r);
    REQUIRE(f.parts.size() >= 2);
    const auto& hot = f.parts[0];
    // Entries outside the hot part: outside the crux, or (rows owned) outside the hot rows.
    std::int64_t outside = split.cold.nnz();
    if (own) {
      outside = a.nnz();
      for (auto r : split.hot_rows) outside -= a.row_ptr[r + 1] - a.row_ptr[r];
    }
    if (outside == 0 && split.hot.nnz() > 0) {
      // The crux holds every entry: the hot part takes the empty rows too, after the others.
      REQUIRE(hot.rows == a.rows);
      REQUIRE(f.parts[1].rows == 0);
      std::vector<std::int64_t> order = split.hot_rows;
      std::vector<char> seen(a.rows, 0);
      for (auto r : order) seen[r] = 1;
      for (std::int64_t r = 0; r < a.rows; ++r)
        if (!seen[r]) order.push_back(r);
      REQUIRE(hot.array(Arr::origin_row).ints == order);
    } else {
      REQUIRE(hot.rows == static_cast<std::int64_t>(split.hot_rows.size()));
      if (hot.rows > 0) REQUIRE(hot.array(Arr::origin_row).ints == split.hot_rows);
      // Rows owned, a hot part: the cold part holds exactly the other rows, in order.
      if (own && split.hot.nnz() > 0) {
        ++owned_split;
        std::vector<char> in_hot(a.rows, 0);
        for (auto r : split.hot_rows) in_hot[r] = 1;
        std::vector<std::int64_t> rest;
        for (std::int64_t r = 0; r < a.rows; ++r)
          if (!in_hot[r]) rest.push_back(r);
        REQUIRE(f.parts[1].rows == static_cast<std::int64_t>(rest.size()));
        if (!hot.atomic && !f.parts[1].atomic) {
          // Neither adds atomically: each row is written at most once, and the format stores
          // (no zeroing of y) exactly when every row is written (a cold graph cut by entries
          // leaves its empty rows unwritten, and y is then scaled by beta first).
          const auto w0 = count_writes(f, 0), w1 = count_writes(f, 1);
          bool every_row_once = true;
          for (std::int64_t r = 0; r < a.rows; ++r) every_row_once &= w0[r] + w1[r] == 1;
          REQUIRE(f.store_only == every_row_once);
          if (f.parts[1].rows > 0) {  // in order, or as a random cold graph's SORT left them
            auto rows = f.parts[1].array(Arr::origin_row).ints;
            std::sort(rows.begin(), rows.end());
            REQUIRE(rows == rest);
          }
        }
      }
    }
    if (split.hot.nnz() == 0) ++hot_empty;
    if (split.hot.nnz() == a.nnz() && a.nnz() > 0) ++all_hot;
    if (hot.has(Arr::tc_bit)) {
      ++dense;
      REQUIRE(hot.nnz_stored == (own ? a.nnz() - outside : split.hot.nnz()));
    } else if (!hot.reductions.empty() && hot.reductions[0] == "TC_MMA_F64") {
      ++sparse;
    }
    if (tau_r == 0.0) REQUIRE(hot.n_bmtb == 0);  // no kernel for an empty crux

    std::vector<double> x(a.cols);
    for (auto& v : x) v = u(rng) * 2.0 - 1.0;
    const auto ref = spmv_reference(a, x);
    const auto scale = abs_product(a, x);
    const double alpha = i % 4 == 0 ? 1.0 : -1.5 + 3.0 * u(rng);
    const double beta = i % 3 == 0 ? 0.0 : -1.0 + 2.0 * u(rng);
    std::vector<double> y0(a.rows);
    for (auto& v : y0) v = beta == 0.0 ? std::numeric_limits<double>::quiet_NaN() : u(rng);
    std::vector<double> y = y0;
    interpret(f, x, alpha, beta, y);
    for (std::int64_t r = 0; r < a.rows; ++r) {
      const double want = alpha * ref[r] + (beta == 0.0 ? 0.0 : beta * y0[r]);
      INFO("row " << r);
      REQUIRE(std::abs(y[r] - want) <=
              1e-12 * (std::abs(alpha) * scale[r] + std::abs(beta * (beta == 0.0 ? 0 : y0[r]))) +
                  1e-300);
    }
  }
  // Every kind of configuration was met.
  REQUIRE(dense >= 20);
  REQUIRE(sparse >= 20);
  REQUIRE(hot_empty >= 25);
  REQUIRE(all_hot >= 20);
  REQUIRE(cuda_hot >= 15);
  REQUIRE(random_cold >= 20);
  REQUIRE(owned >= 100);
  REQUIRE(owned_split >= 30);
}

TEST_CASE("fp16 tensor-core crux graphs equal the reference on 80 random configurations",
          "[graph][crux]") {
  std::mt19937_64 rng(20261126);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  auto half = [](double v) { return half_to_float(float_to_half(static_cast<float>(v))); };
  DesignOptions o;
  o.dtype = "f16";
  int tc_parts = 0;
  for (int i = 0; i < 80; ++i) {
    const std::int64_t rows = i % 4 == 1 ? 1 + i % 9 : 1 + static_cast<std::int64_t>(u(rng) * 80);
    const std::int64_t cols = i % 4 == 2 ? 1 + i % 5 : 1 + static_cast<std::int64_t>(u(rng) * 80);
    Csr64 a = test::random_matrix(5000 + i, rows, cols, 0.02 + 0.3 * u(rng), 0.3 * u(rng));
    double tau_c = u(rng), tau_r = tau_c * u(rng);
    if (i % 5 == 0) tau_c = tau_r = 1.0;
    if (i % 5 == 1) tau_r = 0.0;
    const Graph g = crux_graph(tau_c, tau_r, csr_vector_ops(), i % 3, 8);
    INFO("config " << i << ": " << rows << "x" << cols << ", " << describe(g));
    const Format f = design(g, a, o);
    tc_parts += f.parts[0].n_bmtb > 0;
    std::vector<double> x(a.cols);
    for (auto& v : x) v = half(u(rng) * 2.0 - 1.0);
    for (auto& v : a.val) v = half(v);  // the values the format stores
    const auto ref = spmv_reference(a, x);
    const auto scale = abs_product(a, x);
    const auto y = interpret(f, x);
    for (std::int64_t r = 0; r < a.rows; ++r) {
      INFO("row " << r);
      REQUIRE(std::abs(y[r] - ref[r]) <= 1e-5 * scale[r] + 1e-300);  // fp32 accumulation
    }
  }
  REQUIRE(tc_parts >= 50);
}

TEST_CASE("a stored zero of the crux never turns an infinite x into NaN", "[graph][crux]") {
  // Column 2 holds an explicit zero in the hot rows; x[2] is infinite. Row 0's product with it
  // is dropped, as every CUDA-core reduction drops it.
  const Csr64 a = test::from_triples(
      3, 3, {{0, 0, 1.0}, {0, 1, 2.0}, {0, 2, 0.0}, {1, 0, 3.0}, {1, 1, 4.0}, {2, 2, 5.0}});
  const std::vector<double> x = {1.0, 1.0, std::numeric_limits<double>::infinity()};
  for (int encoding : {1, 2}) {
    const Format f = design(crux_graph(1.0, 1.0, csr_vector_ops(), encoding), a);
    const auto y = interpret(f, x);
    REQUIRE(y[0] == 3.0);
    REQUIRE(y[1] == 7.0);
    REQUIRE(std::isinf(y[2]));
  }
}

TEST_CASE("crux formats survive the format binary", "[graph][crux]") {
  const Csr64 a = test::random_matrix(77, 120, 90, 0.08);
  const auto x = test::test_x(a.cols);
  for (int encoding : {1, 2}) {
    const Format f = design(crux_graph(0.8, 0.5, csr_vector_ops(), encoding), a);
    const Format back = from_safetensors(to_safetensors(f, "test"), "crux");
    REQUIRE(back.parts[0].n_tc == f.parts[0].n_tc);
    REQUIRE(back.parts[0].tc_w == f.parts[0].tc_w);
    REQUIRE(interpret(back, x) == interpret(f, x));
  }
  // A corrupted TC part is refused by name: a column outside the matrix, a TC block count that
  // does not match its arrays.
  Format f = design(crux_graph(0.8, 0.5, csr_vector_ops(), 1), a);
  REQUIRE(f.parts[0].n_tc > 0);
  Format bad_col = f;
  bad_col.parts[0].arrays.at("tc_col").ints[0] = a.cols + 5;
  REQUIRE_THROWS_WITH(from_safetensors(to_safetensors(bad_col, "test"), "crux"),
                      Catch::Contains("array tc_col: column " + std::to_string(a.cols + 5)));
  Format bad_count = f;
  bad_count.parts[0].n_tc += 1;
  REQUIRE_THROWS_WITH(from_safetensors(to_safetensors(bad_count, "test"), "crux"),
                      Catch::Contains("array bmw_first_tc") || Catch::Contains("array tc_bit"));
}

TEST_CASE("CRUX_SPLIT and the TC operators state their rules", "[graph][crux]") {
  REQUIRE_THAT(rule_of(R"([{"op":"CRUX_SPLIT","tau_c":0.3,"tau_r":0.5,"branches":[
                 [{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}],
                 [{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}]]}])"),
               Catch::Contains("ops[0] (CRUX_SPLIT): rule: tau_r must not exceed tau_c"));
  REQUIRE_THAT(rule_of(R"([{"op":"CRUX_SPLIT","tau_c":1.5}])"),
               Catch::Contains("parameter 'tau_c' must be a number in [0, 1]"));
  REQUIRE_THAT(rule_of(R"([{"op":"COMPRESS"},{"op":"BMW_ROW_BLOCK"},{"op":"TC_MMA_F64"}])"),
               Catch::Contains("TC_MMA_F64 implements a part stored by TC_COMPRESS"));
  REQUIRE_THAT(rule_of(R"([{"op":"TC_COMPRESS"},{"op":"THREAD_TOTAL_RED"}])"),
               Catch::Contains("tensor-core operator alone"));
  REQUIRE_THAT(rule_of(R"([{"op":"TC_COMPRESS"},{"op":"TC_MMA_F64"},{"op":"WARP_TOTAL_RED"}])"),
               Catch::Contains("tensor-core operator alone"));
  REQUIRE_THAT(rule_of(R"([{"op":"TC_COMPRESS"},{"op":"BMW_ROW_BLOCK"},{"op":"TC_MMA_F64"}])"),
               Catch::Contains("BMW is already blocked"));
  REQUIRE_THAT(rule_of(R"([{"op":"COMPRESS"},{"op":"TC_COMPRESS"},{"op":"TC_MMA_F64"}])"),
               Catch::Contains("takes the place of COMPRESS"));
  REQUIRE_THAT(rule_of(R"([{"op":"TC_COMPRESS","encoding":3},{"op":"TC_MMA_F64"}])"),
               Catch::Contains("parameter 'encoding' must be an integer in [0, 2]"));
  REQUIRE_THAT(rule_of(R"([{"op":"TC_COMPRESS"},{"op":"TC_MMA_F16"}])"),
               Catch::Contains("TC_MMA_F16 implements a part stored by TC_COMPRESS"));
  REQUIRE_THAT(rule_of(R"([{"op":"TC_COMPRESS","width":5},{"op":"TC_MMA_F64"}])"),
               Catch::Contains("width must be 4 (fp64 m8n8k4) or 8 (fp16 m16n8k8)"));
  REQUIRE(rule_of(R"([{"op":"TC_COMPRESS","width":8},{"op":"TC_MMA_F16"}])") == "");
  try {
    design(crux_graph(1.0, 1.0, csr_vector_ops(), 0, 8), small());  // an f64 format
    FAIL("fp16 tensor cores designed for an f64 format");
  } catch (const DesignError& e) {
    REQUIRE_THAT(e.what(), Catch::Contains("TC_MMA_F16: rule: serves f16 formats, not f64"));
  }
  REQUIRE(rule_of(R"([{"op":"TC_COMPRESS"},{"op":"SET_RESOURCES","threads":64},
                      {"op":"TC_MMA_F64"}])") == "");
}

TEST_CASE("a crux holding every entry runs as one kernel that writes every row once",
          "[graph][crux]") {
  // 20 x 12: rows 3, 9 and 19 empty, the others 1 to 4 entries.
  std::vector<std::tuple<std::int64_t, std::int64_t, double>> t;
  for (std::int64_t r = 0; r < 20; ++r)
    for (std::int64_t k = 0; r != 3 && r != 9 && r != 19 && k < 1 + r % 4; ++k)
      t.emplace_back(r, (r * 5 + k * 7) % 12, 1.0 + 0.25 * static_cast<double>((r + k) % 5));
  const Csr64 a = test::from_triples(20, 12, t);
  std::vector<double> x(12);
  for (std::int64_t i = 0; i < 12; ++i) x[i] = 0.5 * static_cast<double>(i % 4) - 0.75;
  const auto ref = spmv_reference(a, x);
  for (int encoding : {0, 1, 2}) {
    INFO("encoding " << encoding);
    const Format f = design(crux_graph(1.0, 1.0, csr_vector_ops(), encoding), a);
    REQUIRE(f.parts.size() == 2);
    CHECK(f.parts[0].rows == 20);  // 17 rows with entries, then the 3 empty ones
    CHECK(f.parts[1].rows == 0);
    CHECK(f.parts[1].n_bmtb == 0);  // no cold kernel
    CHECK(f.store_only);
    // From a y of NaNs (interpret's store-only start), every row is written: empty ones 0.
    const auto y = interpret(f, x);
    for (std::int64_t r = 0; r < 20; ++r) CHECK(std::abs(y[r] - ref[r]) <= 1e-14);
    std::vector<double> yb(20, 2.0);
    interpret(f, x, -1.0, 0.5, yb);
    for (std::int64_t r = 0; r < 20; ++r) CHECK(std::abs(yb[r] - (1.0 - ref[r])) <= 1e-14);
  }
  // One entry short of the whole matrix: the cold part keeps every row, and stores first.
  const Format g = design(crux_graph(1.0, 0.9, csr_vector_ops(), 0), a);
  CHECK(g.parts[1].rows == 20);
  CHECK_FALSE(g.store_only);
  CHECK(g.storing_part == 1);
}

TEST_CASE("a crux whose hot part owns its rows writes disjoint rows in one launch",
          "[graph][crux]") {
  // 16 x 10, 43 entries: column 0 in every row but 5 and 11 (empty), rows 0-7 also hold columns
  // 1-3, rows 8-15 one entry each in columns 4-8, row 2 one in column 9. The hot columns covering
  // 0.6 of the entries are 0-2 (14 + 7 + 7); in them, 0.48 of the entries (21) are rows 0-7 but 5,
  // 3 each.
  std::vector<std::tuple<std::int64_t, std::int64_t, double>> t;
  for (std::int64_t r = 0; r < 16; ++r) {
    if (r == 5 || r == 11) continue;
    t.emplace_back(r, 0, 1.0 + 0.5 * static_cast<double>(r));
    for (std::int64_t c = 1; r < 8 && c < 4; ++c)
      t.emplace_back(r, c, 0.25 * static_cast<double>(c + r));
    if (r >= 8) t.emplace_back(r, 4 + r % 6, -2.0);
    if (r == 2) t.emplace_back(r, 9, 3.0);  // a hot row's entry outside the hot columns
  }
  const Csr64 a = test::from_triples(16, 10, t);
  std::vector<double> x(10);
  for (std::int64_t i = 0; i < 10; ++i) x[i] = 0.3 * static_cast<double>(i) - 1.0;
  const auto ref = spmv_reference(a, x);
  const auto split = crux::crux_split(a, 0.6, 0.48);
  REQUIRE(split.hot_cols.size() == 3);
  REQUIRE(split.hot_rows.size() == 7);  // rows 0-7 but 5
  for (int encoding : {1, 2}) {
    INFO("encoding " << encoding);
    // MatXtract's split: the hot rows' entries in columns 3 and 9 stay cold, so both parts
    // write those rows.
    const Format crux_only = design(crux_graph(0.6, 0.48, csr_vector_ops(), encoding), a);
    CHECK(crux_only.parts[1].rows == 16);
    CHECK_FALSE(crux_only.store_only);
    // Rows owned: the hot part holds rows 0-7 but 5 whole, columns 3 and 9 included.
    const Format f = design(crux_graph(0.6, 0.48, csr_vector_ops(), encoding, 4, true), a);
    REQUIRE(f.parts.size() == 2);
    CHECK(f.parts[0].rows == 7);
    if (encoding == 1) CHECK(f.parts[0].nnz_stored == 7 * 4 + 1);  // the dense unfolding
    CHECK(f.parts[1].rows == 9);                                   // rows 5 and 8-15
    CHECK(f.parts[1].array(Arr::origin_row).ints ==
          std::vector<std::int64_t>{5, 8, 9, 10, 11, 12, 13, 14, 15});
    CHECK(f.store_only);
    CHECK(f.storing_part == -1);
    // Every row once, from a y of NaNs; with alpha and beta.
    const auto y = interpret(f, x);
    for (std::int64_t r = 0; r < 16; ++r) CHECK(std::abs(y[r] - ref[r]) <= 1e-14);
    std::vector<double> yb(16, 2.0);
    interpret(f, x, -1.0, 0.5, yb);
    for (std::int64_t r = 0; r < 16; ++r) CHECK(std::abs(yb[r] - (1.0 - ref[r])) <= 1e-14);
  }
  // The hot part takes the cold part's thread count, so the two can share a launch.
  auto cold = csr_vector_ops();
  cold.insert(cold.begin() + 2, {"SET_RESOURCES", {{"threads", 256}}, {}});
  const Graph g = crux_graph(0.6, 0.48, cold, 1, 4, true);
  const Format f = design(g, a);
  CHECK(f.parts[0].threads == 256);
  CHECK(f.parts[1].threads == 256);
  // Every non-empty row hot: the cold part has no entry, so the hot part takes the empty rows.
  const Format all = design(crux_graph(1.0, 0.99, csr_vector_ops(), 1, 4, true), a);
  CHECK(all.parts[0].rows == 16);
  CHECK(all.parts[1].rows == 0);
  CHECK(all.store_only);
}

TEST_CASE("a crux without a hot part is emitted as its cold branch", "[graph][crux]") {
  const Csr64 a = test::random_matrix(5, 120, 80, 0.05, 0.3);
  const Graph empty = crux_graph(0.7, 0.0);
  const Graph cold = without_empty_crux(empty);
  REQUIRE(cold.ops.size() == csr_vector_ops().size());
  for (std::size_t i = 0; i < cold.ops.size(); ++i) CHECK(cold.ops[i].op == csr_vector_ops()[i].op);
  // The same rows of y from the same kernel shape: one part writing every row.
  std::vector<double> x(a.cols);
  for (std::int64_t i = 0; i < a.cols; ++i) x[i] = 0.125 * static_cast<double>(i % 11) - 0.5;
  const Format fc = design(cold, a), fe = design(empty, a);
  REQUIRE(fc.parts.size() == 1);
  CHECK(fc.store_only);
  CHECK(fe.parts[0].n_bmtb == 0);
  const auto yc = interpret(fc, x), ye = interpret(fe, x);
  for (std::int64_t r = 0; r < a.rows; ++r) CHECK(yc[r] == ye[r]);
  // A crux with a hot part, and other graphs, stay as they are.
  CHECK(without_empty_crux(crux_graph(0.7, 0.2)).ops.at(0).op == "CRUX_SPLIT");
  CHECK(without_empty_crux(cold).ops.size() == cold.ops.size());
}
