// Horizontal fusion of SpMM parts: CELL's buckets in one launch (parts sharing rows of C add
// atomically, parts alone on their rows do not), the reasons a format is not fused, the one
// launch of kernel.h and of the launch plan, and the fused folder built by nvcc as a user would.
#include "codegen/fusion.hpp"

#include <catch2/catch.hpp>
#include <filesystem>

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

TEST_CASE("formats that cannot fuse say why; SpMV never fuses", "[codegen][spmm]") {
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
  // SpMV (and SpTV) formats keep one kernel per part.
  for (const auto& k : test::known_graphs())
    if (k.name == "acsr-binned") {
      const auto v = codegen::generate(k, matrix());
      CHECK_FALSE(codegen::plan_fusion(v.format).fused);
      CHECK(v.kernels.kernels.size() >= 2);
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
