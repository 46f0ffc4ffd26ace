// The crux search: each (tau_c, tau_r) the Bayesian optimisation asks for becomes a crux graph
// scored by the evaluator; failed points are counted and kept out; the best graph is the best
// point's. Checked with an evaluator whose time is a known function of the crux, and with the
// cost model (no GPU), whose best graph must still compute A x.
#include "search/crux_search.hpp"

#include <catch2/catch.hpp>
#include <cmath>

#include "core/reference.hpp"
#include "graph/crux_graph.hpp"
#include "graph/designer.hpp"
#include "graph/interpreter.hpp"
#include "search_test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::search;

namespace {

// Time 1 + (tau_c - 0.7)^2 + (tau_r - 0.4)^2 read from the graph; tau_c > 0.95 fails.
class KnownTimes final : public Evaluator {
 public:
  bool measures() const override { return true; }
  std::string device() const override { return "test"; }
  std::string arch() const override { return "sm_90"; }
  std::vector<Evaluation> evaluate(const std::vector<Candidate>& batch) override {
    std::vector<Evaluation> out;
    for (const auto& c : batch) {
      const auto& split = c.graph.ops.at(0);
      REQUIRE(split.op == "CRUX_SPLIT");
      REQUIRE(split.branches.at(0).at(0).op == "TC_COMPRESS");
      REQUIRE(split.branches.at(0).at(1).op == "TC_MMA_F64");
      const double tc = split.params.at("tau_c"), tr = split.params.at("tau_r");
      const bool own = split.params.value("own_rows", 0) == 1;
      if (own) ++own_calls;
      Evaluation e;
      e.ok = tc <= 0.95;
      // The hot part owning its rows saves 0.05 where tau_r > 0.3.
      e.time_us = e.ok ? 1.0 + (tc - 0.7) * (tc - 0.7) + (tr - 0.4) * (tr - 0.4) -
                             (own && tr > 0.3 ? 0.05 : 0.0)
                       : 0.0;
      if (!e.ok) e.failure = "out of range";
      ++calls;
      out.push_back(e);
    }
    return out;
  }
  int calls = 0, own_calls = 0;
};

}  // namespace

TEST_CASE("the crux search scores crux graphs and returns the best point's", "[search][crux]") {
  KnownTimes ev;
  const auto r = search_crux(ev);
  // One graph a point without a hot part, two with one (the crux only, and rows owned).
  std::size_t with_hot = 0;
  for (const auto& p : r.bo.tried) with_hot += p.tau_r > 0;
  REQUIRE(r.bo.tried.size() <= 20);
  REQUIRE(ev.calls == static_cast<int>(r.bo.tried.size() + with_hot));
  REQUIRE(ev.own_calls == static_cast<int>(with_hot));
  REQUIRE(r.evaluations.size() == r.candidates.size());
  REQUIRE(static_cast<int>(r.evaluations.size()) == ev.calls);
  int failed = 0;
  double best = 1e300;
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const auto& split = r.candidates[i].graph.ops.at(0);
    if (split.params.at("tau_c").get<double>() > 0.95) {
      ++failed;
      REQUIRE_FALSE(r.evaluations[i].ok);
    } else {
      best = std::min(best, r.evaluations[i].time_us);
    }
  }
  REQUIRE(failed >= 1);  // the all-hot point (1, 1) is among the first tried
  REQUIRE(r.bo.failed >= 1);
  REQUIRE(r.best_evaluation.time_us == best);
  REQUIRE(r.bo.best_value == best);  // a point scores its faster graph
  REQUIRE(r.best.ops.at(0).params.at("tau_c").get<double>() == r.bo.best.tau_c);
  REQUIRE(r.best.ops.at(0).params.at("tau_r").get<double>() == r.bo.best.tau_r);
  REQUIRE(best < 0.96);  // within 0.1 of the minimum at (0.7, 0.4), rows owned
  REQUIRE(r.best.ops.at(0).params.value("own_rows", 0) == 1);
  graph::Graph g = r.best;
  graph::validate(g);
  SECTION("the crux alone when asked") {
    KnownTimes once;
    CruxSearchOptions o;
    o.own_rows_too = false;
    const auto q = search_crux(once, o);
    CHECK(once.own_calls == 0);
    CHECK(once.calls == static_cast<int>(q.bo.tried.size()));
  }
}

TEST_CASE("the crux search runs on the cost model and its best graph computes A x",
          "[search][crux]") {
  const Csr64 a = search_test::irregular(400);
  CostModelEvaluator ev(a, "f64");
  CruxSearchOptions o;
  o.bo.max_evaluations = 8;
  const auto r = search_crux(ev, o);
  REQUIRE(r.bo.tried.size() <= 8);
  REQUIRE(r.best_evaluation.ok);
  REQUIRE_FALSE(r.best.ops.empty());
  std::vector<double> x(a.cols);
  for (std::int64_t i = 0; i < a.cols; ++i) x[i] = 1.0 + static_cast<double>(i % 7) * 0.25;
  const auto ref = spmv_reference(a, x);
  const auto y = graph::interpret(graph::design(r.best, a), x);
  for (std::int64_t i = 0; i < a.rows; ++i)
    REQUIRE(std::abs(y[i] - ref[i]) <= 1e-10 * (1 + std::abs(ref[i])));
}

TEST_CASE("the crux search's cold part is the fastest graph on CUDA cores alone",
          "[search][crux]") {
  const auto scored = [](const char* ops, double us, bool ok = true) {
    Scored s;
    s.candidate.graph =
        graph::graph_from_json(nlohmann::json::parse(std::string(R"({"ops":)") + ops + "}"));
    s.evaluation.ok = ok;
    s.evaluation.time_us = us;
    return s;
  };
  const char* scalar = R"([{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}])";
  const char* bands = R"([{"op":"ROW_DIV","bounds":[5],"branches":[
      [{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}],
      [{"op":"COMPRESS"},{"op":"BMW_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"},{"op":"WARP_TOTAL_RED"}]]}])";
  // A crux graph (tensor cores inside a division) is never the cold part, however fast; a failed
  // candidate neither.
  const auto crux = graph::crux_graph(0.5, 0.2);
  Scored tc;
  tc.candidate.graph = crux;
  tc.evaluation.ok = true;
  tc.evaluation.time_us = 1.0;
  std::vector<Scored> h = {scored(scalar, 9.0), tc, scored(bands, 7.5), scored(scalar, 2.0, false)};
  const auto cold = fastest_cuda_core_ops(h);
  REQUIRE(cold.size() == 1);
  REQUIRE(cold[0].op == "ROW_DIV");
  REQUIRE(fastest_cuda_core_ops({tc}).empty());
  REQUIRE(fastest_cuda_core_ops({}).empty());

  // Used as the cold branch: every point's graph carries it, and the best one computes A x.
  const Csr64 a = search_test::irregular(400);
  CostModelEvaluator ev(a, "f64");
  CruxSearchOptions o;
  o.bo.max_evaluations = 6;
  o.cold = cold;
  const auto r = search_crux(ev, o);
  REQUIRE(r.cold_note.empty());
  INFO(r.evaluations.front().failure);
  REQUIRE(r.best_evaluation.ok);
  for (const auto& c : r.candidates)
    REQUIRE(c.graph.ops.at(0).branches.at(1).at(0).op == "ROW_DIV");
  std::vector<double> x(a.cols, 1.0);
  const auto ref = spmv_reference(a, x);
  const auto y = graph::interpret(graph::design(r.best, a), x);
  for (std::int64_t i = 0; i < a.rows; ++i)
    REQUIRE(std::abs(y[i] - ref[i]) <= 1e-10 * (1 + std::abs(ref[i])));

  // A cold graph that is no valid branch falls back to CSR-vector, and says so.
  o.cold = {graph::OpNode{"THREAD_TOTAL_RED", nlohmann::json::object(), {}}};
  const auto fallback = search_crux(ev, o);
  REQUIRE_FALSE(fallback.cold_note.empty());
  REQUIRE(fallback.cold.size() == graph::csr_vector_ops().size());
}
