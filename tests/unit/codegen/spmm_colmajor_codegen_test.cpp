// Column-major B and C (EmitOptions::layout "col"): the kernels compile under NVRTC for sm_90
// (f64, f32, f16; store, add and atomic sinks; CELL; lanes over columns; fused and unfused), the
// row-major outputs are what they were, and kernel.h, the format binary and the launch plan
// follow the layout.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>

#include "../graph/graph_test_util.hpp"
#include "codegen/emit.hpp"
#include "codegen/launch_plan.hpp"
#include "codegen_test_util.hpp"
#include "graph/cell_graph.hpp"
#include "graph/format.hpp"
#include "graph/spmm_graph.hpp"
#include "io/safetensors.hpp"
#include "runtime/nvrtc.hpp"
#include "test_support.hpp"

using namespace sparsetune;

namespace {

codegen::Emitted emit(const graph::Graph& g, const Csr64& a, const std::string& dtype,
                      const std::string& layout) {
  codegen::EmitOptions o;
  o.design.dtype = dtype;
  o.layout = layout;
  return codegen::generate(g, a, o);
}

}  // namespace

TEST_CASE("column-major SpMM kernels compile under NVRTC for sm_90", "[codegen][spmm]") {
  std::vector<runtime::CompileJob> jobs;
  const Csr64 a = test::random_matrix(12, 150, 120, 0.05);
  const int tiles[][3] = {{1, 1, 1}, {2, 2, 1},  {4, 4, 1}, {8, 2, 1},
                          {3, 1, 1}, {1, 1, 32}, {2, 2, 8}};
  int k = 0;
  for (const auto& g : test::known_graphs()) {
    const auto t = tiles[k % 7];
    const std::string dtype = std::vector<std::string>{"f64", "f32", "f16"}[k % 3];
    ++k;
    graph::Graph s;
    try {
      s = graph::as_spmm(g, t[0], t[1], t[2]);
    } catch (const graph::GraphError&) {
      continue;
    }
    codegen::Emitted e;
    try {
      e = emit(s, a, dtype, "col");
    } catch (const graph::DesignError&) {
      continue;  // lanes refused by this graph's reductions
    }
    REQUIRE(e.kernels.source.find("column-major B of n columns") != std::string::npos);
    REQUIRE(e.kernels.source.find("st_mac_tile_cm") != std::string::npos);
    REQUIRE(e.host_header.find("kColMajor = true") != std::string::npos);
    jobs.push_back({g.name + "-spmm-col-" + dtype, e.kernels.source});
  }
  REQUIRE(jobs.size() >= 10);
  for (int p : {1, 3}) {
    graph::CellGraphOptions co;
    co.partitions = p;
    co.block_factor = 2;
    jobs.push_back({"cell-col-" + std::to_string(p),
                    emit(graph::cell_graph(a, 64, co), a, "f32", "col").kernels.source});
    jobs.push_back({"cell-folded-col-" + std::to_string(p),
                    emit(graph::cell_graph(std::vector<std::int64_t>(p, 2), co), a, "f64", "col")
                        .kernels.source});
  }
  test::require_all_compile(jobs);
}

TEST_CASE("row-major SpMM outputs do not change with the layout option", "[codegen][spmm]") {
  const Csr64 a = test::random_matrix(3, 80, 60, 0.08);
  for (const auto& g : test::known_graphs()) {
    graph::Graph s;
    try {
      s = graph::as_spmm(g, 4, 2);
    } catch (const graph::GraphError&) {
      continue;
    }
    const auto plain = codegen::generate(s, a);
    const auto row = emit(s, a, "f64", "row");
    REQUIRE(row.kernels.source == plain.kernels.source);
    REQUIRE(row.host_header == plain.host_header);
    REQUIRE(row.format_bytes == plain.format_bytes);
    REQUIRE(plain.kernels.source.find("_cm") == std::string::npos);
    REQUIRE(plain.kernels.source.find("column-major") == std::string::npos);
    REQUIRE(plain.host_header.find("kColMajor") == std::string::npos);
    // Column-major: the same kernels' names and the same arrays, another addressing.
    const auto col = emit(s, a, "f64", "col");
    REQUIRE(col.kernels.kernels == plain.kernels.kernels);
    REQUIRE(col.kernels.source != plain.kernels.source);
    REQUIRE(graph::from_safetensors(io::parse_safetensors(col.format_bytes, "f"), "f").col_major());
  }
}

TEST_CASE("column-major: kernel.h and the launch plan take column strides", "[codegen][spmm]") {
  const Csr64 a = test::random_matrix(4, 70, 50, 0.08);
  graph::Graph g;
  for (const auto& k : test::known_graphs())
    if (k.name == "segmented-coo") g = graph::as_spmm(k, 4, 2);
  REQUIRE(!g.ops.empty());
  const auto e = emit(g, a, "f64", "col");
  const auto& h = e.host_header;
  REQUIRE(h.find("dense column-major B") != std::string::npos);
  REQUIRE(h.find("ldb < (kCols > 0 ? kCols : 1) || ldc < (kRows > 0 ? kRows : 1)") !=
          std::string::npos);
  REQUIRE(h.find("return run(f, B, kCols > 0 ? kCols : 1, C, kRows > 0 ? kRows : 1, n") !=
          std::string::npos);
  REQUIRE(!e.format.store_only);  // the C scaling kernel walks columns
  REQUIRE(e.kernels.source.find("&C[i % rows + (i / rows) * ldc]") != std::string::npos);
  const auto p = codegen::make_launch_plan(e.format, e.kernels, "t", {2.0, 0.5}, 33);
  REQUIRE(p.layout == "col");
  const auto& scale = p.launches.front();
  REQUIRE(scale.kernel == codegen::kScaleKernelSpmm);
  REQUIRE(scale.args.at(3).i == 70);  // ldc = rows
  const auto& part = p.launches.back();
  REQUIRE(part.args.at(1).i == 50);  // ldb = cols
  REQUIRE(part.args.at(3).i == 70);  // ldc = rows
  REQUIRE(part.args.at(4).i == 33);  // n
  // The plan's reference from the matrix and from the interpreter agree, column-major.
  const auto from_matrix = codegen::spmm_plan_inputs("f64", a, 33, 1, true);
  const auto from_format = codegen::spmm_plan_inputs(e.format, 33, 1);
  REQUIRE(from_matrix.x == from_format.x);
  REQUIRE(from_matrix.y_ref.size() == from_format.y_ref.size());
  for (std::size_t i = 0; i < from_matrix.y_ref.size(); ++i)
    REQUIRE(std::abs(from_matrix.y_ref[i] - from_format.y_ref[i]) <= 1e-12);
  // A layout for SpMV, or an unknown one, is refused.
  graph::Graph v;
  for (const auto& k : test::known_graphs())
    if (k.name == "csr-vector") v = k;
  REQUIRE_THROWS_WITH(emit(v, a, "f64", "col"), Catch::Contains("for op spmm"));
  REQUIRE_THROWS_WITH(emit(g, a, "f64", "cm"), Catch::Contains("row or col"));
}

TEST_CASE("a column-major SpMM folder compiles with nvcc in a user's program", "[codegen][spmm]") {
  if (test::nvcc_path().empty()) {
    WARN("nvcc not found; the NVRTC test covers the same source");
    return;
  }
  for (const char* name : {"csr-vector", "segmented-coo"}) {
    testing::TempDir dir("sparsetune-nvcc-spmm-col");
    graph::Graph g;
    for (const auto& k : test::known_graphs())
      if (k.name == name) g = graph::as_spmm(k, 4, 2);
    const auto e = emit(g, test::shared_matrices()[1].second, "f64", "col");
    const std::string user =
        "#include \"kernel.h\"\nstatic_assert(sparsetune_kernel::kColMajor);\n"
        "int main() {\n  sparsetune_kernel::Format f;\n"
        "  if (sparsetune_kernel::load(\"format.safetensors\", &f) != cudaSuccess) return 1;\n"
        "  double *B = nullptr, *C = nullptr;\n"
        "  sparsetune_kernel::run(f, B, C, 128);\n"
        "  sparsetune_kernel::run(f, B, sparsetune_kernel::kCols + 2, C,\n"
        "                         sparsetune_kernel::kRows + 3, 128, 2.0, 0.5, cudaStream_t{});\n"
        "  sparsetune_kernel::release(&f);\n  return 0;\n}\n";
    std::string log;
    const int rc = test::nvcc_compile_as_user(e, g, dir.path, log, user);
    INFO(name << "\n" << log);
    REQUIRE(rc == 0);
  }
}
