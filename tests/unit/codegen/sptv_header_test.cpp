// kernel.h of an SpTV format: the pipelined run from host memory compiles as a user's program
// would use it (nvcc, no GPU needed), beside load() and run().
#include <catch2/catch.hpp>
#include <fstream>

#include "codegen/emit.hpp"
#include "codegen_test_util.hpp"
#include "core/sptv_matrix.hpp"
#include "graph/sptv_graph.hpp"
#include "test_support.hpp"

using namespace sparsetune;

TEST_CASE("kernel.h of an SpTV format has a pipelined run from host memory", "[codegen][sptv]") {
  SparseTensor t;
  t.dims = {6, 5, 7};
  t.idx.resize(3);
  for (std::int64_t i = 0; i < 6; ++i)
    for (std::int64_t j = 0; j < 5; ++j)
      for (std::int64_t k = 0; k < 7; ++k)
        if ((i * 7 + j * 3 + k) % (i + 2) == 0) {
          t.idx[0].push_back(i), t.idx[1].push_back(j), t.idx[2].push_back(k);
          t.val.push_back(1.0 + static_cast<double>(k));
        }
  const auto m = sptv_matrix(t, 2, 0);
  std::vector<graph::SliceFormat> formats = {graph::SliceFormat::CSR,   graph::SliceFormat::COO,
                                             graph::SliceFormat::HYB,   graph::SliceFormat::ELL,
                                             graph::SliceFormat::Dense, graph::SliceFormat::CSR};
  const auto b = graph::sptv_batched_graph(formats, graph::slice_stats(m), 2, 2);
  codegen::EmitOptions eo;
  eo.design = graph::sptv_design_options(m, "f32");
  eo.sptv = graph::sptv_slices(m, formats);
  const auto e = codegen::generate(b.graph, m.a, eo);
  CHECK(e.host_header.find("run_pipelined") != std::string::npos);
  CHECK(e.host_header.find("load_host") != std::string::npos);
  const std::string nvcc = test::nvcc_path();
  if (nvcc.empty()) {
    WARN("no nvcc on this machine: the pipelined run is not compiled here");
    return;
  }
  testing::TempDir dir("sparsetune-sptv-header");
  codegen::write_emitted(e, b.graph, dir.path.string());
  std::ofstream(dir.path / "user.cu")
      << "#include \"kernel.h\"\n"
         "int main(int, char** argv) {\n"
         "  sparsetune_kernel::HostFormat h;\n"
         "  if (sparsetune_kernel::load_host(argv[1], &h, 4) != cudaSuccess) return 1;\n"
         "  float *v = nullptr, *y = nullptr;\n"
         "  cudaMalloc(&v, sizeof(float) * sparsetune_kernel::kCols);\n"
         "  cudaMalloc(&y, sizeof(float) * sparsetune_kernel::kRows);\n"
         "  const cudaError_t e = sparsetune_kernel::run_pipelined(h, v, y, 2.0f, 0.5f);\n"
         "  sparsetune_kernel::release(&h);\n"
         "  return e == cudaSuccess ? 0 : 2;\n}\n";
  const std::string cmd = "cd '" + dir.path.string() + "' && " + nvcc +
                          " -arch=sm_90 -o user user.cu kernel.cu > nvcc.log 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream log(dir.path / "nvcc.log");
  INFO(std::string(std::istreambuf_iterator<char>(log), std::istreambuf_iterator<char>()));
  CHECK(rc == 0);
}
