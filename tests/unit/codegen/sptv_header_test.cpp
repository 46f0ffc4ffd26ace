// kernel.h of an SpTV format: the pipelined run from host memory compiles as a user's program
// would use it (nvcc, no GPU needed), beside load() and run().
#include <catch2/catch.hpp>
#include <fstream>

#include "codegen/emit.hpp"
#include "codegen_test_util.hpp"
#include "core/reference.hpp"
#include "core/sptv_matrix.hpp"
#include "graph/graph.hpp"
#include "graph/interpreter.hpp"
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

TEST_CASE("Slice sub-graphs of every format and lane count compile under NVRTC for sm_90",
          "[codegen][sptv]") {
  // Fibers of 1 to 40 entries along mode 2 (size 48), slices along mode 0, one of them empty.
  SparseTensor t;
  t.dims = {4, 30, 48};
  t.idx.resize(3);
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t j = 0; j < 30; ++j)
      for (std::int64_t k = 0; k < (i == 2 ? 0 : 1 + (j * 7 + i) % 40); ++k) {
        t.idx[0].push_back(i), t.idx[1].push_back(j), t.idx[2].push_back(k);
        t.val.push_back(0.5 + static_cast<double>(k % 5));
      }
  const auto m = sptv_matrix(t, 2, 0);
  std::vector<double> v(48);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.25 + 0.125 * static_cast<double>(i % 7);
  const auto ref = sptv_reference_in_view_order(t, m, v).val;
  std::vector<runtime::CompileJob> jobs;
  for (int f = 0; f < graph::kSliceFormats; ++f)
    for (int lanes : {1, 2, 4, 8, 16, 32})
      for (const char* dtype : {"f64", "f32"}) {
        const auto fmt = static_cast<graph::SliceFormat>(f);
        graph::Graph g;
        g.name = std::string("slices-") + graph::slice_format_name(fmt);
        g.op = "sptv";
        g.ops.push_back({"SLICE_DIV",
                         {{"count", 1}, {"assign", std::vector<std::int64_t>(m.slices, 0)}},
                         {graph::slice_format_ops(fmt, 4, lanes)}});
        graph::validate(g, "slice compile test");
        codegen::EmitOptions eo;
        eo.design = graph::sptv_design_options(m, dtype);
        eo.sptv = graph::sptv_slices(m, std::vector<graph::SliceFormat>(m.slices, fmt));
        const auto e = codegen::generate(g, m.a, eo);
        // The optimized format (arrays replaced by formulas, derived threads) still computes Y.
        INFO(graph::slice_format_name(fmt) << ", " << lanes << " lanes, " << dtype);
        REQUIRE(relative_l2_error(graph::interpret(e.format, v), ref) <
                (std::string(dtype) == "f64" ? 1e-12 : 1e-5));
        if (lanes > 1 && lanes < 32 && fmt != graph::SliceFormat::COO)
          CHECK(e.kernels.source.find("WARP_BITMAP_RED") != std::string::npos);
        if (lanes == 32 && fmt != graph::SliceFormat::COO && fmt != graph::SliceFormat::HYB)
          CHECK(e.kernels.source.find("WARP_TOTAL_RED") != std::string::npos);
        jobs.push_back({g.name + "-" + std::to_string(lanes) + "-" + dtype, e.kernels.source});
      }
  // And the graph tune builds from the slices' statistics, with mixed formats.
  std::vector<graph::SliceFormat> mixed = {graph::SliceFormat::CSR, graph::SliceFormat::ELL,
                                           graph::SliceFormat::COO, graph::SliceFormat::Dense};
  codegen::EmitOptions eo;
  eo.design = graph::sptv_design_options(m, "f32");
  eo.sptv = graph::sptv_slices(m, mixed);
  jobs.push_back(
      {"htf-mixed", codegen::generate(graph::sptv_graph(mixed, graph::slice_stats(m), 4), m.a, eo)
                        .kernels.source});
  test::require_all_compile(jobs);
}

TEST_CASE("an SpTV branch's parts share a stream; a storing HYB part runs first, y not zeroed",
          "[codegen][sptv]") {
  // Fibers along mode 2 of one entry each but for (i, j) = (0, 0), which holds three: HYB at
  // H = 1 puts every fiber's first entry in its ELL part and the two others in the COO tail.
  SparseTensor t;
  t.dims = {4, 3, 5};
  t.idx.resize(3);
  auto add = [&](std::int64_t i, std::int64_t j, std::int64_t k, double v) {
    t.idx[0].push_back(i), t.idx[1].push_back(j), t.idx[2].push_back(k), t.val.push_back(v);
  };
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t j = 0; j < 3; ++j) add(i, j, (i + 2 * j) % 5, 1.0 + i + 10.0 * j);
  add(0, 0, 3, 7.0);
  add(0, 0, 4, -2.0);
  const auto m = sptv_matrix(t, 2, 0);
  REQUIRE(graph::hyb_width(m, std::vector<char>(static_cast<std::size_t>(m.slices), 1)) == 1);
  const std::vector<graph::SliceFormat> hyb(static_cast<std::size_t>(m.slices),
                                            graph::SliceFormat::HYB);
  codegen::EmitOptions eo;
  eo.design = graph::sptv_design_options(m, "f32");
  eo.sptv = graph::sptv_slices(m, hyb);

  SECTION("one batch: the ELL part stores, the COO tail adds after it on the same stream") {
    const auto e = codegen::generate(graph::sptv_graph(hyb, graph::slice_stats(m), 1), m.a, eo);
    const auto& f = e.format;
    REQUIRE(f.parts.size() == 2);
    CHECK_FALSE(f.store_only);
    CHECK(f.storing_part == 0);
    CHECK(f.parts[0].reductions == std::vector<std::string>{"THREAD_BITMAP_RED"});
    CHECK(f.parts[0].thread_loads == 4);
    CHECK_FALSE(f.scales_output_first());
    // Neither run() nor run_pipelined() zeroes y: the storing part writes every row first.
    CHECK(e.host_header.find("cudaMemsetAsync(y") == std::string::npos);
    CHECK(e.host_header.find("constexpr int kPartGroup[2] = {0, 0};") != std::string::npos);
    // The binary keeps the storing part, and its reader checks it against the arrays.
    const auto back = graph::from_safetensors(
        io::parse_safetensors(io::serialize_safetensors(graph::to_safetensors(f, "t")), "f"), "f");
    CHECK(back.storing_part == 0);
    // y by the CPU walk of the format, from a y of NaN (beta = 0 never reads it).
    const std::vector<double> v = {0.5, 1.0, -1.5, 2.0, 0.25};
    const auto ref = sptv_reference_in_view_order(t, m, v).val;
    CHECK(relative_l2_error(graph::interpret(f, v), ref) < 1e-6);
  }
  SECTION("three batches: each batch's two parts on its own stream group, no storing part") {
    const auto b = graph::sptv_batched_graph(hyb, graph::slice_stats(m), 1, 3);
    const auto e = codegen::generate(b.graph, m.a, eo);
    CHECK(e.format.storing_part == -1);
    CHECK(e.host_header.find("cudaMemsetAsync(y") != std::string::npos);
    std::string want;
    int parts = 0;
    for (std::size_t i = 0; i < e.format.parts.size(); ++i)
      if (e.format.parts[i].n_bmtb > 0) {
        const auto& path = e.format.parts[i].path;
        want += (parts++ ? ", " : "") + path.substr(0, path.find('.'));
      }
    CHECK(parts >= 4);
    CHECK(e.host_header.find("kPartGroup[" + std::to_string(parts) + "] = {" + want + "};") !=
          std::string::npos);
  }
}
