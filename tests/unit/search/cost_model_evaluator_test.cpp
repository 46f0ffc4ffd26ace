// The cost-model evaluator charges an adding format the pass that zeroes its output before the
// kernels run, and nothing to a store-only format or one whose storing part runs first.
#include <catch2/catch.hpp>

#include "graph/graph.hpp"
#include "models/cost_model.hpp"
#include "search/evaluator.hpp"
#include "search/space.hpp"
#include "search_test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::search;

namespace {

Candidate known(const std::string& name) {
  Candidate c;
  c.graph = graph::read_graph(default_graphs_dir() + "/" + name + ".json");
  return c;
}

}  // namespace

TEST_CASE("the cost model charges an adding format its output pass", "[search][cost]") {
  const Csr64 a = search_test::irregular(3000);
  CostModelEvaluator eval(a, "f64");
  const auto e = eval.evaluate({known("segmented-coo"), known("csr-vector"), known("hyb")});
  REQUIRE(e.size() == 3);
  for (const auto& x : e) REQUIRE(x.ok);
  // segmented-coo adds by atomics into a y zeroed first: half a launch plus 8 bytes a row.
  const models::DeviceSpec dev;
  const double pass = 0.5 * dev.launch_us + 3000.0 * 8.0 / (dev.bandwidth_gbs * 1e3);
  CHECK(e[0].detail.at("output_pass_us").get<double>() == Approx(pass));
  CHECK(models::output_pass_us(3000, 1, 8, dev) == Approx(pass));
  // CSR-vector stores every row; hyb's ELL part stores first and its COO part adds after it.
  CHECK(e[1].detail.at("output_pass_us").get<double>() == 0.0);
  CHECK(e[2].detail.at("output_pass_us").get<double>() == 0.0);
  // SpMM: C's rows x n values.
  CHECK(models::output_pass_us(3000, 128, 4, dev) ==
        Approx(0.5 * dev.launch_us + 3000.0 * 128 * 4 / (dev.bandwidth_gbs * 1e3)));
}
