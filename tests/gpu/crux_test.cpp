// [gpu] MatXtract's graphs on the device: CRUX_SPLIT with the hot part on fp64 tensor cores
// (mma.sync m8n8k4) or fp16 ones (m16n8k8, fp32 accumulation), dense unfolding and sparse
// encoding, and a CUDA-core cold part, over a few cruxes (all cold, all hot and between; the hot
// part holding the crux or its rows whole, one launch), dtypes and alpha/beta; y must match the
// fp64 reference.
#include <catch2/catch.hpp>

#include "gpu_cases.hpp"
#include "graph/crux_graph.hpp"
#include "io/matrix_file.hpp"
#include "unit/graph/graph_test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::gpu_test;

TEST_CASE("crux graphs on tensor cores verify", "[gpu][crux]") {
  std::vector<std::pair<std::string, Csr64>> matrices;
  matrices.emplace_back("3x2, smaller than a TC block",
                        test::from_triples(3, 2, {{0, 0, 1.0}, {2, 1, -2.0}}));
  matrices.emplace_back("no entries 7x5", test::from_triples(7, 5, {}));
  matrices.emplace_back("rectangular 300x90, empty rows",
                        test::random_matrix(3, 300, 90, 0.05, 0.3));
  for (const char* name : {"west0067", "rajat19"})
    matrices.emplace_back(
        name, io::read_matrix(
                  (testing::shared_dir() / "matrices" / (std::string(name) + ".mtx.gz")).string()));
  const std::vector<std::pair<double, double>> cruxes = {
      {0.0, 0.0}, {0.5, 0.3}, {0.9, 0.6}, {1.0, 1.0}};
  const std::vector<codegen::Scaling> scalings = {{1.0, 0.0}, {2.0, -0.5}};
  std::vector<Case> cases;
  int k = 0;
  for (const auto& [name, a] : matrices)
    for (const auto& [tc, tr] : cruxes)
      for (int encoding : {0, 1, 2}) {
        const auto g = graph::crux_graph(tc, tr, graph::csr_vector_ops(), encoding);
        CaseOptions co;
        co.scaling = scalings[k % 2];
        co.note = " crux (" + std::to_string(tc) + ", " + std::to_string(tr) + ") encoding " +
                  std::to_string(encoding);
        add_case(cases, g, name, a, k % 3 == 2 ? "f32" : "f64", co);
        // fp16 tensor cores with fp32 accumulation (f16 formats).
        co.note += " fp16 m16n8k8";
        add_case(cases, graph::crux_graph(tc, tr, graph::csr_vector_ops(), encoding, 8), name, a,
                 "f16", co);
        // The hot part owning its rows (store-only, one fused launch), between the extremes.
        if (tr > 0 && tr < 1 && encoding > 0) {
          co.note = " crux (" + std::to_string(tc) + ", " + std::to_string(tr) +
                    ") own rows, encoding " + std::to_string(encoding);
          add_case(cases, graph::crux_graph(tc, tr, graph::csr_vector_ops(), encoding, 4, true),
                   name, a, "f64", co);
          co.note += " fp16 m16n8k8";
          add_case(cases, graph::crux_graph(tc, tr, graph::csr_vector_ops(), encoding, 8, true),
                   name, a, "f16", co);
        }
        ++k;
      }
  REQUIRE(cases.size() == matrices.size() * (cruxes.size() * 3 * 2 + 2 * 2 * 2));
  run_cases(cases);
}
