// SpMM kernels with COL_TILE lanes (lanes over columns) compile under NVRTC for sm_90, for the
// warp-per-row graphs, csr-scalar and the atomic splits (running row sums too), f64, f32 and f16;
// csr-vector with a warp of lanes emits no shuffle, groups of 8 shuffle across groups only, and the
// default is unchanged.
#include <catch2/catch.hpp>

#include "../graph/graph_test_util.hpp"
#include "codegen/emit.hpp"
#include "codegen/launch_plan.hpp"
#include "codegen_test_util.hpp"
#include "graph/spmm_graph.hpp"
#include "runtime/nvrtc.hpp"
#include "test_support.hpp"

using namespace sparsetune;

namespace {

graph::Graph spmv(const char* ops) {
  return graph::parse_graph(std::string(R"({"ops": )") + ops + "}", "test");
}

const char* kCsrVector = R"([{"op": "COMPRESS"}, {"op": "BMW_ROW_BLOCK", "rows": 1},
  {"op": "SET_RESOURCES", "threads": 128}, {"op": "THREAD_TOTAL_RED"}, {"op": "WARP_TOTAL_RED"}])";
const char* kShapes[] = {
    kCsrVector,
    R"([{"op": "COMPRESS"}, {"op": "BMW_ROW_BLOCK", "rows": 1}, {"op": "BMT_ROW_BLOCK", "rows": 1},
      {"op": "THREAD_TOTAL_RED"}])",
    R"([{"op": "COMPRESS"}, {"op": "BMT_ROW_BLOCK", "rows": 1}, {"op": "THREAD_TOTAL_RED"}])",
    R"([{"op": "COMPRESS"}, {"op": "BMW_ROW_BLOCK", "rows": 1}, {"op": "BMT_NNZ_BLOCK", "nnz": 8},
      {"op": "THREAD_TOTAL_RED"}, {"op": "GMEM_ATOM_RED"}])",
    R"([{"op": "COMPRESS"}, {"op": "BMT_NNZ_BLOCK", "nnz": 5}, {"op": "THREAD_BITMAP_RED"},
      {"op": "GMEM_ATOM_RED"}])",
};

}  // namespace

TEST_CASE("SpMM kernels with lanes over columns compile under NVRTC for sm_90", "[codegen][spmm]") {
  const Csr64 a = test::random_matrix(21, 300, 200, 0.04);
  std::vector<runtime::CompileJob> jobs;
  const int tiles[][3] = {{4, 4, 32}, {1, 1, 32}, {2, 2, 8}, {3, 4, 4}};
  int k = 0;
  for (const char* shape : kShapes)
    for (const auto& t : tiles)
      for (const char* dtype : {"f64", "f32", "f16"}) {
        codegen::EmitOptions o;
        o.design.dtype = dtype;
        o.optimizer.compress = (k++ % 2) == 0;
        const auto e = codegen::generate(graph::as_spmm(spmv(shape), t[0], t[1], t[2]), a, o);
        INFO(e.kernels.source);
        REQUIRE(e.kernels.source.find("$") == std::string::npos);
        REQUIRE(e.kernels.source.find("const st_idx_t bmt = t0 + st_g0 + st_i;") !=
                std::string::npos);
        REQUIRE(e.host_header.find("/ " + std::to_string(t[0] * t[2]) + ")") !=
                std::string::npos);  // grid y: the block's lanes * tn columns
        jobs.push_back({"lanes-" + std::to_string(k) + "-" + dtype, e.kernels.source});
      }
  test::require_all_compile(jobs);
}

TEST_CASE("lanes over columns drop the cross-lane reduction", "[codegen][spmm]") {
  const Csr64 a = test::random_matrix(22, 100, 80, 0.05);
  const auto source = [&](int lanes) {
    return codegen::generate(graph::as_spmm(spmv(kCsrVector), 4, 4, lanes), a).kernels.source;
  };
  const std::string shuffle = "__shfl_xor_sync(ST_FULL_MASK, w_acc, off)";
  // A warp of lanes: every lane's sum is the row's for its columns.
  const std::string warp = source(32);
  REQUIRE(warp.find(shuffle) == std::string::npos);
  REQUIRE(warp.find("every lane emits its columns") != std::string::npos);
  REQUIRE(warp.find("const long long st_n0 = st_nb + (long long)(threadIdx.x & (32 - 1)) * 4;") !=
          std::string::npos);
  // Groups of 8: shuffles across the 4 groups only, and the first group emits.
  const std::string eight = source(8);
  REQUIRE(eight.find("for (int off = 16; off >= 8; off >>= 1) w_acc += " + shuffle) !=
          std::string::npos);
  REQUIRE(eight.find("if (w_active && lane < 8) {") != std::string::npos);
  // A group loads its thread block's entries together, one per lane, and shuffles each out.
  REQUIRE(warp.find("st_v8[u] = __shfl_sync(st_gmask, st_v, q0 + u, 32);") != std::string::npos);
  REQUIRE(eight.find("st_v8[u] = __shfl_sync(st_gmask, st_v, q0 + u, 8);") != std::string::npos);
  // Whole tiles take the branch-free vector path, chosen once per row for the whole group.
  REQUIRE(warp.find("const bool st_full = __all_sync(st_gmask, ST_TILE_FULL(t_sum));") !=
          std::string::npos);
  REQUIRE(warp.find("ST_MAC_FULL(t_sum, st_v8[u], st_c8[u]);") != std::string::npos);
  REQUIRE(eight.find("((1u << (8 & 31)) - 1u) << st_g0") != std::string::npos);
  // The non-zero split's running row sums: the same group loads, a batch's B segments loaded
  // before its multiply-adds, and a row step flushes the finished row for the whole group.
  const std::string split =
      codegen::generate(graph::as_spmm(spmv(kShapes[4]), 4, 4, 32), a).kernels.source;
  REQUIRE(split.find("st_d8[u] = __shfl_sync(st_gmask, st_d, q0 + u, 32);") != std::string::npos);
  REQUIRE(split.find("ST_LOAD_FULL(st_b8[u], st_c8[u]);") != std::string::npos);
  REQUIRE(split.find("ST_FMA(t_sum, st_v8[u], st_b8[u]);") != std::string::npos);
  // lanes = 1 is the kernel as it was: the plain prologue and the full shuffle tree.
  const std::string one = source(1);
  REQUIRE(one == codegen::generate(graph::as_spmm(spmv(kCsrVector), 4, 4), a).kernels.source);
  REQUIRE(one.find("st_g0") == std::string::npos);
  REQUIRE(one.find("__shfl_sync(") == std::string::npos);
  REQUIRE(one.find("for (int off = 16; off > 0; off >>= 1) w_acc += " + shuffle) !=
          std::string::npos);
  // The launch plan's grid y: ceil(n / (lanes * tn)).
  const auto e = codegen::generate(graph::as_spmm(spmv(kCsrVector), 4, 4, 32), a);
  const auto plan = codegen::make_launch_plan(e.format, e.kernels, "", {}, 300);
  REQUIRE(plan.launches.back().grid_y == 3);
}
