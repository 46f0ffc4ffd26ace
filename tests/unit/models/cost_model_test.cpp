#include "models/cost_model.hpp"

#include <catch2/catch.hpp>

#include "core/convert.hpp"
#include "graph/designer.hpp"
#include "graph/format.hpp"
#include "graph/graph.hpp"

using namespace sparsetune;

namespace {

// rows x rows with `len` entries in every row except row 0, which has `long_row`.
Csr64 rows_matrix(std::int64_t rows, std::int64_t len, std::int64_t long_row) {
  Coo64 c;
  c.rows = c.cols = rows;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t n = r == 0 ? long_row : len;
    for (std::int64_t k = 0; k < n; ++k) {
      c.row.push_back(r);
      c.col.push_back((r + k * 7) % rows);
      c.val.push_back(1.0 + k);
    }
  }
  std::int64_t dup = 0;
  return coo_to_csr<std::int64_t, std::int64_t>(c, &dup);
}

graph::Graph parse(const char* text) {
  auto g = graph::graph_from_json(nlohmann::json::parse(text));
  graph::validate(g);
  return g;
}

const char* kScalar =
    R"({"format":"sparsetune-graph","version":1,"name":"scalar","op":"spmv","ops":[
    {"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK","rows":1},{"op":"THREAD_TOTAL_RED"}]})";
const char* kVector =
    R"({"format":"sparsetune-graph","version":1,"name":"vector","op":"spmv","ops":[
    {"op":"COMPRESS"},{"op":"BMW_ROW_BLOCK","rows":1},{"op":"THREAD_TOTAL_RED"},
    {"op":"WARP_TOTAL_RED"}]})";

models::CostEstimate cost(const char* g, const Csr64& a) {
  const auto gr = parse(g);
  const auto m = graph::apply_graph(gr, a);
  const auto f = graph::design(gr, a);
  return models::estimate_cost(m, graph::stored_bytes(f), 8);
}

}  // namespace

TEST_CASE("cost model counts warp steps the way the skeleton maps threads", "[models]") {
  // 64 rows of 3 entries, one thread per row: two warps of one 3-step round each.
  const auto a = rows_matrix(64, 3, 3);
  const auto c = cost(kScalar, a);
  CHECK(c.warp_steps == 6);
  CHECK(c.max_warp_steps == 3);
  CHECK(c.lane_efficiency == Approx(1.0));
  CHECK(c.flops == 2.0 * 64 * 3);
  CHECK(c.time_us > 0);
}

TEST_CASE("cost model sees the imbalance of one long row", "[models]") {
  // Row 0 has 2000 entries: a thread per row waits 2000 steps in the first warp; a warp per row
  // splits it over 32 lanes.
  const auto a = rows_matrix(4096, 4, 2000);
  const auto scalar = cost(kScalar, a);
  const auto vector = cost(kVector, a);
  CHECK(scalar.max_warp_steps == 2000);
  CHECK(vector.max_warp_steps < 2000 / 32 + 8);
  // 4095 rows of 4 and one of 2000; the first warp runs 2000 steps, the other 127 four each.
  CHECK(scalar.lane_efficiency == Approx((4095.0 * 4 + 2000) / (32.0 * (2000 + 127 * 4))));
  CHECK(scalar.tail_us > vector.tail_us * 10);
  // Short regular rows: a warp per row leaves most lanes idle, a thread per row does not.
  // (Enough rows that a thread per row still fills the GPU.)
  const auto b = rows_matrix(1 << 16, 4, 4);
  CHECK(cost(kScalar, b).lane_efficiency > 0.99);
  CHECK(cost(kVector, b).lane_efficiency < 0.2);
  CHECK(cost(kScalar, b).time_us < cost(kVector, b).time_us);
}

TEST_CASE("cost model charges launches and memory", "[models]") {
  const auto a = rows_matrix(1 << 15, 8, 8);
  const auto c = cost(kVector, a);  // a warp per row: enough warps to keep DRAM busy
  models::DeviceSpec d;
  CHECK(c.launch_us == Approx(d.launch_us));
  // Values, columns and x/y at least: 8 + 4 bytes per entry plus x and y in f64.
  CHECK(c.bytes >= (1 << 15) * 8 * 12.0 + 2 * (1 << 15) * 8);
  CHECK(c.memory_us == Approx(c.bytes / (d.bandwidth_gbs * 1e3)).epsilon(0.01));
  CHECK(c.time_us >= c.memory_us + c.launch_us);
  CHECK(c.gflops() == Approx(c.flops / (c.time_us * 1e3)));
}

namespace {

// The SpMM estimate of an SpMV graph given column tile `tn` (vectors of `vec`).
models::CostEstimate spmm_cost(const char* g, const Csr64& a, std::int64_t n, int tn, int vec) {
  auto gr = parse(g);
  gr.op = "spmm";
  gr.ops.insert(gr.ops.begin() + 1, {"COL_TILE", {{"tn", tn}, {"vec", vec}}, {}});
  graph::validate(gr);
  const auto m = graph::apply_graph(gr, a);
  const auto f = graph::design(gr, a);
  return models::estimate_cost(m, graph::stored_bytes(f), 8, {}, n);
}

}  // namespace

TEST_CASE("the SpMM cost model: work per column tile, B and C traffic", "[models][spmm]") {
  const auto a = rows_matrix(1 << 15, 8, 8);
  const std::int64_t nnz = a.nnz();
  // Flops are 2 nnz n; warp steps are SpMV's once per column tile.
  const auto spmv = cost(kVector, a);
  const auto t8 = spmm_cost(kVector, a, 64, 8, 4);
  CHECK(t8.flops == 2.0 * static_cast<double>(nnz) * 64);
  CHECK(t8.warp_steps == spmv.warp_steps * 8);
  // C is written once: its 8 bytes per value are among the bytes counted.
  CHECK(t8.bytes >= (1 << 15) * 64 * 8.0);
  // Wider tiles walk the structure fewer times; more columns cost more.
  const auto t1 = spmm_cost(kVector, a, 64, 1, 1);
  CHECK(t1.warp_steps == spmv.warp_steps * 64);
  CHECK(t1.time_us > t8.time_us);
  CHECK(spmm_cost(kVector, a, 256, 8, 4).time_us > t8.time_us);
  // n = 1 of an SpMM graph is priced as SpMM (one tile), not as SpMV.
  CHECK(spmm_cost(kVector, a, 1, 1, 1).flops == 2.0 * static_cast<double>(nnz));
}

TEST_CASE("the SpMM cost model charges one launch for fused parts", "[models][spmm]") {
  const auto a = rows_matrix(1 << 12, 8, 8);
  const char* split = R"({"ops":[{"op":"ROW_DIV","count":3,"branches":[
      [{"op":"COMPRESS"},{"op":"BMW_ROW_BLOCK","rows":1},{"op":"THREAD_TOTAL_RED"},{"op":"WARP_TOTAL_RED"}],
      [{"op":"COMPRESS"},{"op":"BMW_ROW_BLOCK","rows":1},{"op":"THREAD_TOTAL_RED"},{"op":"WARP_TOTAL_RED"}],
      [{"op":"COMPRESS"},{"op":"BMW_ROW_BLOCK","rows":1},{"op":"THREAD_TOTAL_RED"},{"op":"WARP_TOTAL_RED"}]]}]})";
  auto gr = parse(split);
  gr.op = "spmm";
  for (auto& b : gr.ops[0].branches)
    b.insert(b.begin() + 1, {"COL_TILE", {{"tn", 4}, {"vec", 4}}, {}});
  graph::validate(gr);
  const auto m = graph::apply_graph(gr, a);
  const auto f = graph::design(gr, a);
  const auto c = models::estimate_cost(m, graph::stored_bytes(f), 8, {}, 32);
  models::DeviceSpec d;
  // Three parts of one thread count run as one launch: one launch's overhead in the time.
  CHECK(c.launch_us == Approx(3 * d.launch_us));  // what separate launches would cost
  // Their memory and issue times add up; their tails (summed in tail_us) overlap.
  CHECK(c.time_us >= d.launch_us + std::max(c.memory_us, c.issue_us) + c.atomic_us - 1e-9);
  CHECK(c.time_us <=
        d.launch_us + std::max({c.memory_us, c.issue_us, c.tail_us}) + c.atomic_us + 1e-9);
  CHECK(c.time_us < c.launch_us + c.memory_us + c.issue_us);
}
