// `sparsetune eval`: the cost model's pick against the oracle, from hand-chosen rows.
#include "report/eval.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <tuple>

#include "graph/crux_graph.hpp"
#include "graph/graph.hpp"
#include "models/crux_predictor.hpp"
#include "models/spmv_rank_features.hpp"
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

TEST_CASE("eval: a pick as fast as the oracle counts as the oracle, whatever its name",
          "[eval]") {
  testing::TempDir dir("sparsetune-eval-ties");
  db::TuningDb d(dir.file("t.db"));
  d.put_matrix({"fa", "alpha", 10, 10, 30, "{}"});
  // The model picks y; x measured the same time and comes first by name.
  d.add(row("fa", "graph/x", 7.0, R"({"predicted_us":6})"));
  d.add(row("fa", "graph/y", 7.0, R"({"predicted_us":5})"));
  const auto e = report::evaluate_cost_model(d);
  REQUIRE(e.matrices.size() == 1);
  CHECK(e.matrices[0].pick == "graph/y");
  CHECK(e.matrices[0].best == "graph/x");  // the oracle by name, tied in time
  CHECK(e.matrices[0].share == 1.0);
  CHECK(e.top1 == 1.0);
}

TEST_CASE("eval: the crux predictor's crux judged by the measured point of its graph",
          "[eval][crux]") {
  testing::TempDir dir("sparsetune-eval-crux");
  db::TuningDb d(dir.file("t.db"));
  // Four matrices whose hot parts gain under 2 % at best: every label is all cold, so the model
  // predicts (0, 0) and each prediction is judged by the all-cold point. By hand: m0, m2 and m3
  // have the all-cold point fastest (share 1); m1's best is a hot point 1 % faster (share 0.99).
  const std::vector<std::vector<std::tuple<double, double, double>>> points = {
      {{0, 0, 10.0}, {0.5, 0.2, 12.0}, {1, 1, 11.0}},
      {{0, 0, 10.0}, {0.5, 0.2, 9.9}, {1, 1, 13.0}},
      {{0, 0, 20.0}, {0.7, 0.4, 25.0}, {1, 1, 30.0}},
      {{0, 0, 5.0}, {0.2, 0.1, 6.0}, {0.9, 0.5, 7.0}}};
  for (std::size_t m = 0; m < points.size(); ++m) {
    // Every matrix feature the training set reads (the ranking's and the crux's), made up.
    nlohmann::json f = nlohmann::json::object();
    auto names = models::spmv_rank_feature_names();
    const auto crux = models::crux_feature_names();
    names.insert(names.end(), crux.begin(), crux.end());
    for (std::size_t k = 0; k < names.size(); ++k)
      if (names[k].find('.') != std::string::npos)
        f[names[k]] = static_cast<double>(m + 1) * static_cast<double>(k % 7 + 1);
    const std::string fp = "f" + std::to_string(m), name = "m" + std::to_string(m);
    d.put_matrix({fp, name, 100, 100, 500 + 100 * static_cast<std::int64_t>(m), f.dump()});
    for (const auto& [c, r, us] : points[m]) {
      auto x = row(fp, "", us, R"({"origin":"crux"})");
      x.arch = "sm_90";
      x.graph = graph::graph_to_json(graph::crux_graph(c, r)).dump();
      x.candidate = "graph/" + std::to_string(std::hash<std::string>{}(x.graph));
      d.add(x);
    }
  }
  models::TrainOptions o;
  o.out_dir = (dir.path / "models").string();
  o.created = "2026-11-26";
  const auto r = models::train_crux(d, o);
  const auto model = models::CruxPredictor::read(r.files.front());
  const auto e = report::evaluate_crux(d, model);
  REQUIRE(e.matrices.size() == 4);
  for (const auto& m : e.matrices) {
    INFO(m.name);
    CHECK(m.pick == "(0.00, 0.00)");
    CHECK(m.ranked == 3);
    CHECK(m.pick_us == Approx(m.name == "m2" ? 20.0 : m.name == "m3" ? 5.0 : 10.0));
    CHECK(m.share == Approx(m.name == "m1" ? 0.99 : 1.0));
  }
  CHECK(e.top1 == Approx(0.75));
  CHECK(e.within_10_percent == 4);
  CHECK(e.min_share == Approx(0.99));
  const auto only = report::evaluate_crux(d, model, {"m1"});
  REQUIRE(only.matrices.size() == 1);
  CHECK(only.matrices[0].best == "(0.50, 0.20)");
}
