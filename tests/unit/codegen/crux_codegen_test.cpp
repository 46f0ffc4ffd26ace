// MatXtract's graphs through the Kernel Builder: the hot part's kernel issues mma.sync m8n8k4 in
// fp64 or m16n8k8 in fp16 (dense unfolding or sparse encoding), the cold part's is a CUDA-core
// kernel; the optimized
// format still equals the fp64 reference on the CPU interpreter, and every kernel compiles under
// NVRTC for sm_90 (no GPU needed).
#include <catch2/catch.hpp>
#include <cmath>

#include "../graph/graph_test_util.hpp"
#include "codegen/emit.hpp"
#include "codegen/fusion.hpp"
#include "codegen/launch_plan.hpp"
#include "codegen_test_util.hpp"
#include "core/reference.hpp"
#include "graph/crux_graph.hpp"
#include "graph/interpreter.hpp"

using namespace sparsetune;

namespace {

// Relative L2 error of y against the reference.
double rel_error(const std::vector<double>& y, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < y.size(); ++i)
    num += (y[i] - ref[i]) * (y[i] - ref[i]), den += ref[i] * ref[i];
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

}  // namespace

TEST_CASE("crux kernels issue mma.sync, verify on the CPU and compile for sm_90",
          "[codegen][crux]") {
  const std::vector<std::pair<std::string, Csr64>> matrices = {
      {"stencil", test::stencil5(12)},
      {"random", test::random_matrix(41, 150, 120, 0.06)},
      {"tiny", test::from_triples(3, 2, {{0, 0, 1.0}, {2, 1, -2.0}})}};
  const std::vector<std::pair<double, double>> cruxes = {{0.6, 0.4}, {1.0, 1.0}, {0.5, 0.0}};
  std::vector<runtime::CompileJob> jobs;
  int k = 0, fused = 0;
  for (const auto& [name, a] : matrices)
    for (const auto& [tc, tr] : cruxes)
      for (int encoding : {0, 1, 2}) {
        codegen::EmitOptions o;
        o.design.dtype = std::vector<std::string>{"f64", "f32", "f16"}[k % 3];
        o.optimizer.compress = k % 4 != 1;
        ++k;
        const bool own = k % 2 == 0;  // (k was just advanced) every other, the rows owned
        const auto g = graph::crux_graph(tc, tr, graph::csr_vector_ops(), encoding, 4, own);
        INFO(name << " crux (" << tc << ", " << tr << ") encoding " << encoding << " "
                  << o.design.dtype << (own ? " own rows" : ""));
        const auto e = codegen::generate(g, a, o);
        const auto& hot = e.format.parts[0];
        // Rows owned, both parts with work: store-only, the two in one launch.
        if (own && hot.n_bmtb > 0 && e.format.parts[1].n_bmtb > 0) {
          REQUIRE(e.format.store_only);
          REQUIRE(e.kernels.kernels == std::vector<std::string>{codegen::kFusedKernel});
          ++fused;
        }
        if (tr > 0 && a.nnz() > 0) {
          REQUIRE(hot.n_bmtb > 0);
          REQUIRE(e.kernels.source.find("mma.sync.aligned.m8n8k4.row.col.f64") !=
                  std::string::npos);
          if (encoding != 0) REQUIRE(hot.has(graph::Arr::tc_bit) == (encoding == 1));
        }
        REQUIRE(e.kernels.source.find("$EMIT") == std::string::npos);
        // The optimized arrays (formulas, narrowed types) still give A x.
        const auto x = test::test_x(a.cols);
        const auto in = codegen::spmv_plan_inputs(o.design.dtype, a, x);
        const double tol = o.design.dtype == "f64" ? 1e-12 : o.design.dtype == "f32" ? 1e-5 : 1e-2;
        REQUIRE(rel_error(graph::interpret(e.format, in.x), in.y_ref) <= tol);
        jobs.push_back({"crux-" + std::to_string(k), e.kernels.source});
        // fp16 tensor cores (m16n8k8, fp32 accumulation) for an f16 format.
        codegen::EmitOptions h;
        h.design.dtype = "f16";
        const auto e16 = codegen::generate(
            graph::crux_graph(tc, tr, graph::csr_vector_ops(), encoding, 8, own), a, h);
        if (tr > 0 && a.nnz() > 0)
          REQUIRE(e16.kernels.source.find("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32") !=
                  std::string::npos);
        const auto in16 = codegen::spmv_plan_inputs("f16", a, x);
        REQUIRE(rel_error(graph::interpret(e16.format, in16.x), in16.y_ref) <= 1e-5);
        jobs.push_back({"crux-f16-" + std::to_string(k), e16.kernels.source});
      }
  REQUIRE(fused >= 2);
  test::require_all_compile(jobs);
}
