// SpMM kernels: the known formats made SpMM by as_spmm and random SpMM graphs compile under
// NVRTC for sm_90 (f32 and f64, every tile and vector width), and an emitted folder builds with
// nvcc beside a user's program that calls SpMM's run().
#include <catch2/catch.hpp>
#include <filesystem>
#include <random>

#include "../graph/graph_test_util.hpp"
#include "codegen/emit.hpp"
#include "codegen_test_util.hpp"
#include "graph/cell_graph.hpp"
#include "graph/spmm_graph.hpp"
#include "runtime/nvrtc.hpp"
#include "test_support.hpp"

using namespace sparsetune;

TEST_CASE("SpMM kernels compile under NVRTC for sm_90", "[codegen][spmm]") {
  std::vector<runtime::CompileJob> jobs;
  const Csr64 a = test::random_matrix(12, 150, 120, 0.05);
  const int tiles[][2] = {{1, 1}, {2, 2}, {4, 4}, {8, 2}, {3, 1}, {32, 4}};
  int k = 0;
  for (const auto& g : test::known_graphs()) {
    const auto t = tiles[k % 6];
    codegen::EmitOptions o;
    o.design.dtype = std::vector<std::string>{"f64", "f32", "f16"}[k % 3];
    ++k;
    graph::Graph s;
    try {
      s = graph::as_spmm(g, t[0], t[1]);
    } catch (const graph::GraphError&) {
      continue;  // none of the known formats today, but a tensor-only one would be
    }
    const auto e = codegen::generate(s, a, o);
    REQUIRE(e.kernels.source.find("SpMM C = A B") != std::string::npos);
    REQUIRE(e.host_header.find("long long ldb") != std::string::npos);
    jobs.push_back({g.name + "-spmm-" + o.design.dtype, e.kernels.source});
  }
  REQUIRE(jobs.size() >= 10);
  std::mt19937_64 rng(4242);
  graph::RandomGraphOptions ro;
  ro.op = "spmm";
  int random = 0;
  for (int i = 0; i < 300 && random < 16; ++i) {
    const auto g = graph::random_graph(rng, ro);
    try {
      codegen::EmitOptions o;
      o.design.dtype = std::vector<std::string>{"f64", "f32", "f16"}[i % 3];
      jobs.push_back(
          {"random-spmm-" + std::to_string(i), codegen::generate(g, a, o).kernels.source});
      ++random;
    } catch (const graph::DesignError&) {
    }
  }
  REQUIRE(random == 16);
  // CELL: partitions of power-of-two buckets and folded rows (Alg. 3's widths, and narrower);
  // with three partitions, a warp of lanes over the columns walks each row.
  for (int p : {1, 3}) {
    graph::CellGraphOptions co;
    co.partitions = p;
    co.block_factor = 2;
    if (p == 3) co.lanes = 32, co.tn = 2, co.vec = 2;
    codegen::EmitOptions o;
    o.design.dtype = p == 1 ? "f32" : "f64";
    jobs.push_back({"cell-" + std::to_string(p),
                    codegen::generate(graph::cell_graph(a, 64, co), a, o).kernels.source});
    jobs.push_back({"cell-folded-" + std::to_string(p),
                    codegen::generate(graph::cell_graph(std::vector<std::int64_t>(p, 2), co), a, o)
                        .kernels.source});
  }
  test::require_all_compile(jobs);
}

TEST_CASE("SpMV sources do not change with the op dimension", "[codegen][spmm]") {
  // The SpMV kernel takes x and y and has no SpMM prologue or tile type.
  graph::Graph g;
  for (const auto& k : test::known_graphs())
    if (k.name == "csr-vector") g = k;
  const auto e = codegen::generate(g, test::random_matrix(1, 50, 50, 0.1));
  REQUIRE(e.kernels.source.find("const st_val_t* __restrict__ x, st_acc_t* __restrict__ y") !=
          std::string::npos);
  REQUIRE(e.kernels.source.find("st_tile") == std::string::npos);
  REQUIRE(e.kernels.source.find("$") == std::string::npos);
  const auto s = codegen::generate(graph::as_spmm(g, 4, 4), test::random_matrix(1, 50, 50, 0.1));
  REQUIRE(s.kernels.source.find("$") == std::string::npos);
  REQUIRE(s.kernels.source.find("typedef st_tile<4> st_tile_t;") != std::string::npos);
}

TEST_CASE("an emitted SpMM folder compiles with nvcc in a user's program", "[codegen][spmm]") {
  if (test::nvcc_path().empty()) {
    WARN("nvcc not found; the NVRTC test covers the same source");
    return;
  }
  // CSR-vector (store-only) and segmented COO (atomics into a scaled C).
  for (const char* name : {"csr-vector", "segmented-coo"}) {
    testing::TempDir dir("sparsetune-nvcc-spmm");
    graph::Graph g;
    for (const auto& k : test::known_graphs())
      if (k.name == name) g = graph::as_spmm(k, 4, 2);
    const auto e = codegen::generate(g, test::shared_matrices()[1].second);
    const std::string user =
        "#include \"kernel.h\"\nint main() {\n  sparsetune_kernel::Format f;\n"
        "  if (sparsetune_kernel::load(\"format.safetensors\", &f) != cudaSuccess) return 1;\n"
        "  double *B = nullptr, *C = nullptr;\n"
        "  sparsetune_kernel::run(f, B, C, 128);\n"
        "  sparsetune_kernel::run(f, B, 130, C, 132, 128, 2.0, 0.5, cudaStream_t{});\n"
        "  sparsetune_kernel::release(&f);\n  return 0;\n}\n";
    std::string log;
    const int rc = test::nvcc_compile_as_user(e, g, dir.path, log, user);
    INFO(name << "\n" << log);
    REQUIRE(rc == 0);
    REQUIRE(std::filesystem::file_size(dir.path / "kernel.o") > 0);
    REQUIRE(std::filesystem::file_size(dir.path / "user.o") > 0);
  }
}

TEST_CASE("an emitted f16 SpMM folder compiles with nvcc: fp16 B, fp32 C", "[codegen][spmm]") {
  if (test::nvcc_path().empty()) {
    WARN("nvcc not found; the NVRTC test covers the same source");
    return;
  }
  // Lanes over columns (store-only) and segmented COO (atomics into a C scaled first).
  for (const auto& [name, lanes] : {std::pair{"csr-vector", 32}, std::pair{"segmented-coo", 1}}) {
    testing::TempDir dir("sparsetune-nvcc-spmm-f16");
    graph::Graph g;
    for (const auto& k : test::known_graphs())
      if (k.name == name) g = graph::as_spmm(k, 4, 4, lanes);
    codegen::EmitOptions o;
    o.design.dtype = "f16";
    const auto e = codegen::generate(g, test::shared_matrices()[1].second, o);
    // A user's fp16 B (__half) passed as its bits; C, alpha and beta fp32. The static_asserts
    // fail the build if the header's types drift.
    const std::string user =
        "#include <cuda_fp16.h>\n#include <type_traits>\n#include \"kernel.h\"\n"
        "static_assert(std::is_same<sparsetune_kernel::value_t, unsigned short>::value, \"B\");\n"
        "static_assert(std::is_same<sparsetune_kernel::result_t, float>::value, \"C\");\n"
        "int main() {\n  sparsetune_kernel::Format f;\n"
        "  if (sparsetune_kernel::load(\"format.safetensors\", &f) != cudaSuccess) return 1;\n"
        "  __half* B = nullptr;\n  float* C = nullptr;\n"
        "  const auto* b = reinterpret_cast<const unsigned short*>(B);\n"
        "  sparsetune_kernel::run(f, b, C, 128);\n"
        "  sparsetune_kernel::run(f, b, 130, C, 132, 128, 2.0f, 0.5f, cudaStream_t{});\n"
        "  sparsetune_kernel::release(&f);\n  return 0;\n}\n";
    std::string log;
    const int rc = test::nvcc_compile_as_user(e, g, dir.path, log, user);
    INFO(name << "\n" << log);
    REQUIRE(rc == 0);
    REQUIRE(std::filesystem::file_size(dir.path / "kernel.o") > 0);
    REQUIRE(std::filesystem::file_size(dir.path / "user.o") > 0);
  }
}
