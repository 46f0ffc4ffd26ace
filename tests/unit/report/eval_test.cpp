// `sparsetune eval`: the cost model's pick against the oracle, from hand-chosen rows.
#include "report/eval.hpp"

#include <catch2/catch.hpp>
#include <cmath>

#include "test_support.hpp"

using namespace sparsetune;

namespace {
db::Measurement row(const std::string& fp, const std::string& cand, double us,
                    const std::string& params, bool ok = true) {
  db::Measurement m;
  m.fingerprint = fp;
  m.op = "spmv";
  m.dtype = "f64";
  m.device = "Test GPU";
  m.candidate = cand;
  m.params = params;
  m.time_us = us;
  m.ok = ok;
  return m;
}
}  // namespace

TEST_CASE("eval: the cost model's pick as a share of the fastest measured candidate", "[eval]") {
  testing::TempDir dir("sparsetune-eval-test");
  db::TuningDb d(dir.file("t.db"));
  d.put_matrix({"fa", "alpha", 10, 10, 30, "{}"});
  d.put_matrix({"fb", "beta", 10, 10, 40, "{}"});
  d.put_matrix({"fc", "gamma", 10, 10, 50, "{}"});
  // alpha: the model ranks x first (predicted 5), measured 10; the oracle is a grown graph at 8.
  d.add(row("fa", "graph/x", 10.0, R"({"predicted_us":5})"));
  d.add(row("fa", "graph/y", 12.0, R"({"predicted_us":6})"));
  d.add(row("fa", "graph/g", 8.0, R"({"origin":"grown"})"));
  d.add(row("fa", "graph/z", 1.0, R"({"predicted_us":1})", /*ok=*/false));       // failed: ignored
  d.add(row("fa", "cusparse/csr_alg1", 2.0, "{}"));                              // not a graph
  d.add(row("fa", "graph/p", 0.5, R"({"predicted":true,"predicted_us":0.1})"));  // a prediction
  // beta: the model's pick is the oracle.
  d.add(row("fb", "graph/x", 4.0, R"({"predicted_us":2})"));
  d.add(row("fb", "graph/y", 9.0, R"({"predicted_us":3})"));
  // gamma: nothing the model ranked was measured: not scored.
  d.add(row("fc", "graph/g", 4.0, R"({"origin":"grown"})"));

  const auto e = report::evaluate_cost_model(d);
  REQUIRE(e.matrices.size() == 2);
  // Sorted by share, worst first: alpha (8/10), then beta (1).
  CHECK(e.matrices[0].name == "alpha");
  CHECK(e.matrices[0].pick == "graph/x");
  CHECK(e.matrices[0].best == "graph/g");
  CHECK(e.matrices[0].ranked == 2);
  CHECK(e.matrices[0].share == Approx(0.8));
  CHECK(e.matrices[1].name == "beta");
  CHECK(e.matrices[1].share == Approx(1.0));
  CHECK(e.top1 == Approx(0.5));
  CHECK(e.geomean_share == Approx(std::sqrt(0.8)));
  CHECK(e.min_share == Approx(0.8));
  CHECK(e.within_10_percent == 1);  // 0.8 < 1/1.1
  const auto only = report::evaluate_cost_model(d, {"beta"});
  REQUIRE(only.matrices.size() == 1);
  CHECK(only.top1 == 1.0);
  const auto j = report::to_json(e);
  CHECK(j["per_matrix"].size() == 2);
  CHECK(j["top1_accuracy"] == 0.5);
}
