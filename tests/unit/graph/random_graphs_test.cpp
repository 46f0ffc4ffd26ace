// Compositions nobody wrote by hand: random valid graphs (seeded) designed on shared and
// edge-case matrices and walked by the CPU interpreter must all equal the fp64 reference.
#include <catch2/catch.hpp>
#include <functional>
#include <set>

#include "core/reference.hpp"
#include "graph/designer.hpp"
#include "graph/interpreter.hpp"
#include "graph/random_graph.hpp"
#include "graph_test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::graph;

TEST_CASE("random valid graphs give the reference result", "[graph]") {
  auto matrices = test::edge_matrices();
  const auto& shared = test::shared_matrices();
  matrices.push_back(shared[0]);  // chesapeake
  matrices.push_back(shared[1]);  // west0067
  matrices.push_back(shared[2]);  // impcol_a
  std::vector<std::vector<double>> xs, refs;
  for (const auto& [name, a] : matrices) {
    xs.push_back(test::test_x(a.cols));
    refs.push_back(spmv_reference(a, xs.back()));
  }
  std::mt19937_64 rng(20261121);
  int fully_valid = 0, data_rejections = 0, checked = 0, stores = 0;
  std::set<std::string> ops_seen;
  for (int i = 0; i < 1200 && fully_valid < 220; ++i) {
    const Graph g = random_graph(rng);
    bool all = true;
    for (std::size_t m = 0; m < matrices.size(); ++m) {
      INFO("graph " << i << ": " << describe(g) << " on " << matrices[m].first);
      Format f;
      try {
        f = design(g, matrices[m].second);
      } catch (const DesignError& e) {
        // A data rule the matrix breaks; the message names the rule.
        REQUIRE(std::string(e.what()).find("rule:") != std::string::npos);
        ++data_rejections;
        all = false;
        continue;
      }
      ++checked;
      // A store-only format is walked from a y of NaNs: a row it misses or writes twice fails.
      stores += f.store_only;
      REQUIRE(relative_l2_error(interpret(f, xs[m]), refs[m]) <= 1e-12);
    }
    if (all) {
      ++fully_valid;
      std::function<void(const std::vector<OpNode>&)> collect =
          [&](const std::vector<OpNode>& ops) {
            for (const auto& n : ops) {
              ops_seen.insert(n.op);
              for (const auto& b : n.branches) collect(b);
            }
          };
      collect(g.ops);
    }
  }
  INFO("checked " << checked << " designs (" << stores << " store-only), " << data_rejections
                  << " data-rule rejections");
  REQUIRE(fully_valid >= 200);
  // Both ways of writing y are exercised.
  REQUIRE(stores >= checked / 10);
  REQUIRE(checked - stores >= checked / 10);
  // The compositions exercise (nearly) the whole operator set.
  REQUIRE(ops_seen.size() >= 25);
}
