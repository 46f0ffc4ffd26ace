// Horizontal fusion: CELL's SpMM buckets in one launch (parts sharing rows of C add atomically,
// parts alone on their rows do not), store-only SpMV parts in one launch, the reasons a format is
// not fused, the one launch of kernel.h and of the launch plan, and fused folders built by nvcc
// as a user would.
#include "codegen/fusion.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <set>

#include "../graph/graph_test_util.hpp"
#include "codegen/emit.hpp"
#include "codegen/launch_plan.hpp"
#include "codegen_test_util.hpp"
#include "graph/cell_graph.hpp"
#include "graph/spmm_graph.hpp"
#include "test_support.hpp"

using namespace sparsetune;

namespace {

const Csr64& matrix() {
  static const Csr64 a = test::random_matrix(21, 160, 120, 0.06);
  return a;
}

codegen::Emitted cell(int partitions, std::int64_t wmax) {
  graph::CellGraphOptions o;
  o.partitions = partitions;
  return codegen::generate(
      graph::cell_graph(std::vector<std::int64_t>(static_cast<std::size_t>(partitions), wmax), o),
      matrix());
}

std::size_t parts_with_work(const graph::Format& f) {
  std::size_t k = 0;
  for (const auto& p : f.parts) k += p.n_bmtb > 0;
  return k;
}

}  // namespace

TEST_CASE("CELL's buckets run in one launch; shared rows add atomically", "[codegen][spmm]") {
  // One partition: the buckets hold disjoint rows; only the folded one adds atomically.
  const auto one = cell(1, 2);
  REQUIRE(parts_with_work(one.format) >= 2);
  const auto u1 = codegen::plan_fusion(one.format);
  REQUIRE(u1.fused);
  CHECK(one.kernels.kernels == std::vector<std::string>{codegen::kFusedKernel});
  for (std::size_t i = 0; i < one.format.parts.size(); ++i)
    CHECK(u1.atomic[i] == one.format.parts[i].atomic);
  std::int64_t grid = 0;
  for (const auto& p : one.format.parts) grid += p.n_bmtb > 0 ? p.grid : 0;
  CHECK(u1.grid == grid);
  // Two partitions: every row is in both, so every part adds atomically once fused.
  const auto two = cell(2, 4);
  const auto u2 = codegen::plan_fusion(two.format);
  REQUIRE(u2.fused);
  for (std::size_t i = 0; i < two.format.parts.size(); ++i)
    if (two.format.parts[i].n_bmtb > 0) CHECK(u2.atomic[i]);
  CHECK(two.kernels.source.find("atomic add (rows shared with other fused parts)") !=
        std::string::npos);
  // kernel.h launches the fused kernel once.
  const auto& h = two.host_header;
  CHECK(h.find(std::string(codegen::kFusedKernel) + "<<<dim3(" + std::to_string(u2.grid)) !=
        std::string::npos);
  CHECK(h.find("sparsetune_spmm_p0<<<") == std::string::npos);
}

TEST_CASE("a fused launch plan: one launch over the parts' grids", "[codegen][spmm]") {
  const auto e = cell(2, 4);
  const auto u = codegen::plan_fusion(e.format);
  const auto p = codegen::make_launch_plan(e.format, e.kernels, "cell", {1.0, 0.0}, 10);
  REQUIRE(p.launches.size() == 1);  // beta = 0: C is zeroed by the plan, not scaled
  const auto& l = p.launches[0];
  CHECK(l.kernel == codegen::kFusedKernel);
  CHECK(l.grid == u.grid);
  CHECK(l.grid_y == (10 + u.narrowest_tile - 1) / u.narrowest_tile);
  std::size_t arrays = 0;
  for (const auto& part : e.format.parts)
    if (part.n_bmtb > 0)
      for (const auto& [name, a] : part.arrays) arrays += a.stored();
  CHECK(l.args.size() == 7 + arrays);
  CHECK(l.args[7].buffer.rfind("p", 0) == 0);
  CHECK(p.zero_output);
}

TEST_CASE("formats that cannot fuse say why", "[codegen][spmm]") {
  const auto g = graph::parse_graph(
      R"({"op": "spmm", "ops": [{"op": "ROW_DIV", "count": 2, "branches": [
      [{"op": "COMPRESS"}, {"op": "COL_TILE"}, {"op": "BMT_ROW_BLOCK", "rows": 1},
       {"op": "SET_RESOURCES", "threads": 128}, {"op": "THREAD_TOTAL_RED"}],
      [{"op": "COMPRESS"}, {"op": "COL_TILE"}, {"op": "BMT_ROW_BLOCK", "rows": 1},
       {"op": "SET_RESOURCES", "threads": 256}, {"op": "THREAD_TOTAL_RED"}]]}]})",
      "test");
  const auto e = codegen::generate(g, matrix());
  const auto u = codegen::plan_fusion(e.format);
  CHECK_FALSE(u.fused);
  CHECK(u.why == "parts 0 and 1 run 128 and 256 threads a block");
  CHECK(e.kernels.source.find("Not fused into one launch: parts 0 and 1 run 128 and 256") !=
        std::string::npos);
  CHECK(e.kernels.kernels.size() == 2);
  // The same rows split by ROW_DIV, one thread count: fused, and still store-only (no atomics).
  auto same = g;
  same.ops[0].branches[1][3].params["threads"] = 128;
  const auto s = codegen::generate(same, matrix());
  const auto us = codegen::plan_fusion(s.format);
  CHECK(us.fused);
  CHECK(s.format.store_only);
  CHECK_FALSE(us.atomic[0]);
  CHECK_FALSE(us.atomic[1]);
  // SpMV: a store-only format fuses when its parts share a thread count, others never do.
  for (const auto& k : test::known_graphs()) {
    INFO(k.name);
    const auto v = codegen::generate(k, matrix());
    std::set<int> threads;
    std::size_t with_work = 0;
    for (const auto& p : v.format.parts)
      if (p.n_bmtb > 0) threads.insert(p.threads), ++with_work;
    CHECK(codegen::plan_fusion(v.format).fused ==
          (v.format.store_only && with_work >= 2 && threads.size() == 1));
  }
}

namespace {

// SpMV over two row bands (store-only), CSR-scalar in each, with these thread counts.
graph::Graph spmv_bands(int t0, int t1) {
  const std::string branch = R"([{"op": "COMPRESS"}, {"op": "BMT_ROW_BLOCK", "rows": 1},
       {"op": "SET_RESOURCES", "threads": @}, {"op": "THREAD_TOTAL_RED"}])";
  std::string b0 = branch, b1 = branch;
  b0.replace(b0.find('@'), 1, std::to_string(t0));
  b1.replace(b1.find('@'), 1, std::to_string(t1));
  return graph::parse_graph(
      R"({"op": "spmv", "ops": [{"op": "ROW_DIV", "count": 2, "branches": [)" + b0 + ", " + b1 +
          "]}]}",
      "test");
}

}  // namespace

TEST_CASE("SpMV: store-only row bands run in one launch, stored without atomics",
          "[codegen][spmv]") {
  const auto e = codegen::generate(spmv_bands(128, 128), matrix());
  REQUIRE(e.format.store_only);
  const auto u = codegen::plan_fusion(e.format);
  REQUIRE(u.fused);
  CHECK_FALSE(u.atomic[0]);
  CHECK_FALSE(u.atomic[1]);
  CHECK(u.grid == e.format.parts[0].grid + e.format.parts[1].grid);
  CHECK(e.kernels.kernels == std::vector<std::string>{codegen::kFusedKernel});
  CHECK(e.kernels.scale_kernel.empty());
  // Each part is a device function over its range of blocks; both store, neither adds.
  const auto& s = e.kernels.source;
  for (const auto& p : e.format.parts)
    CHECK(s.find("static __device__ void\n" + p.kernel + "(\n    const st_idx_t st_block") !=
          std::string::npos);
  CHECK(s.find("atomicAdd") == std::string::npos);
  CHECK(s.find(e.format.parts[1].kernel + "(st_b - " + std::to_string(e.format.parts[0].grid) +
               ", " + std::to_string(e.format.parts[1].grid) + ", x, y, alpha, beta") !=
        std::string::npos);
  // kernel.h: the one launch, no memset, no per-part launch.
  const auto& h = e.host_header;
  CHECK(h.find(std::string(codegen::kFusedKernel) + "<<<" + std::to_string(u.grid) + ", 128") !=
        std::string::npos);
  CHECK(h.find(e.format.parts[0].kernel + "<<<") == std::string::npos);
  CHECK(h.find("cudaMemsetAsync") == std::string::npos);
  // The launch plan: one launch of x, y, alpha, beta and both parts' arrays; y is not zeroed.
  const auto plan = codegen::make_launch_plan(e.format, e.kernels, "bands", {2.0, 0.5});
  REQUIRE(plan.launches.size() == 1);
  const auto& l = plan.launches[0];
  CHECK(l.kernel == codegen::kFusedKernel);
  CHECK(l.grid == u.grid);
  CHECK(l.block == 128);
  CHECK(l.grid_y == 1);
  std::size_t arrays = 0;
  for (const auto& p : e.format.parts)
    for (const auto& [name, a] : p.arrays) arrays += a.stored();
  CHECK(l.args.size() == 4 + arrays);
  CHECK(l.args[4].buffer.rfind("p0.", 0) == 0);
  CHECK(l.args.back().buffer.rfind("p1.", 0) == 0);
  CHECK_FALSE(plan.zero_output);
}

TEST_CASE("SpMV: parts of two thread counts, or adding parts, are not fused", "[codegen][spmv]") {
  const auto e = codegen::generate(spmv_bands(128, 256), matrix());
  const auto u = codegen::plan_fusion(e.format);
  CHECK_FALSE(u.fused);
  CHECK(u.why == "parts 0 and 1 run 128 and 256 threads a block");
  CHECK(e.kernels.kernels.size() == 2);
  CHECK(make_launch_plan(e.format, e.kernels).launches.size() == 2);
  // HYB: its ELL part stores first, its COO part adds after it: order matters, no fusion.
  for (const auto& k : test::known_graphs())
    if (k.name == "hyb") {
      const auto v = codegen::generate(k, test::random_matrix(5, 200, 150, 0.03));
      if (v.format.storing_part < 0) continue;
      const auto uv = codegen::plan_fusion(v.format);
      CHECK_FALSE(uv.fused);
      CHECK(uv.why.find("one after another") != std::string::npos);
      CHECK(v.kernels.source.find("Not fused into one launch") != std::string::npos);
    }
}

TEST_CASE("a fused SpMM folder compiles with nvcc in a user's program", "[codegen][spmm]") {
  if (test::nvcc_path().empty()) {
    WARN("nvcc not found; the NVRTC tests cover the same source");
    return;
  }
  testing::TempDir dir("sparsetune-nvcc-fused");
  graph::CellGraphOptions o;
  o.partitions = 2;
  const auto g = graph::cell_graph(matrix(), 64, o);
  const auto e = codegen::generate(g, matrix());
  REQUIRE(codegen::plan_fusion(e.format).fused);
  const std::string user =
      "#include \"kernel.h\"\nint main() {\n  sparsetune_kernel::Format f;\n"
      "  if (sparsetune_kernel::load(\"format.safetensors\", &f) != cudaSuccess) return 1;\n"
      "  double *B = nullptr, *C = nullptr;\n"
      "  sparsetune_kernel::run(f, B, 64, C, 64, 64, 1.0, 1.0, cudaStream_t{});\n"
      "  sparsetune_kernel::release(&f);\n  return 0;\n}\n";
  std::string log;
  const int rc = test::nvcc_compile_as_user(e, g, dir.path, log, user);
  INFO(log);
  REQUIRE(rc == 0);
}

TEST_CASE("a fused SpMV folder compiles with nvcc in a user's program", "[codegen][spmv]") {
  if (test::nvcc_path().empty()) {
    WARN("nvcc not found; the NVRTC tests cover the same source");
    return;
  }
  testing::TempDir dir("sparsetune-nvcc-fused-spmv");
  const auto g = spmv_bands(128, 128);
  const auto e = codegen::generate(g, matrix());
  REQUIRE(codegen::plan_fusion(e.format).fused);
  std::string log;
  const int rc = test::nvcc_compile_as_user(e, g, dir.path, log);
  INFO(log);
  REQUIRE(rc == 0);
}
