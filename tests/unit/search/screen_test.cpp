// Screening on a row sample, then confirming on the full matrix: what is confirmed comes from
// the sample's search, is distinct, in the sample's order, and only the full matrix's
// measurements reach on_scored.
#include "search/screen.hpp"

#include <catch2/catch.hpp>
#include <set>

#include "features/matrix_features.hpp"
#include "graph/graph.hpp"
#include "search/row_sample.hpp"
#include "search/space.hpp"
#include "search_test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::search;

TEST_CASE("screen: the best of the sample's candidates are confirmed on the full matrix",
          "[search][screen]") {
  const Csr64 a = search_test::irregular(20000);
  const RowSample sample = sample_rows(a, a.nnz() / 4, 16);
  REQUIRE(sample.matrix.nnz() < a.nnz());
  const auto space = load_search_space(default_search_config_dir() + "/space.json");
  const auto pruning = load_pruning(default_search_config_dir() + "/pruning.json");
  const auto seeds = load_graphs(default_graphs_dir());
  const auto baseline = graph::read_graph(default_graphs_dir() + "/csr-vector.json");
  CostModelEvaluator on_sample(sample.matrix, "f64"), on_full(a, "f64");
  SearchOptions opt;
  opt.budget_s = 0;  // no deadline: the cost model predicts
  opt.max_candidates = 40;
  std::vector<std::string> recorded;
  opt.on_scored = [&](const Scored& s) { recorded.push_back(graph_key(s.candidate.graph)); };
  ScreenOptions screen;
  screen.confirm = 6;
  const auto r = screen_then_confirm(sample.matrix, space,
                                     prune_for(pruning, features::alphasparse_features(a)), seeds,
                                     baseline, on_sample, on_full, opt, screen);
  CHECK(r.sample.stats.candidates == 40);
  REQUIRE(r.confirmed.size() == 6);
  std::set<std::string> sampled, confirmed;
  for (const auto& h : r.sample.history) sampled.insert(graph_key(h.candidate.graph));
  for (const auto& c : r.confirmed) {
    CHECK(confirmed.insert(graph_key(c.candidate.graph)).second);  // distinct
    CHECK(sampled.count(graph_key(c.candidate.graph)) == 1);       // found on the sample
  }
  // Only the full matrix's measurements are recorded, each once, in order.
  REQUIRE(recorded.size() == 6);
  for (std::size_t i = 0; i < recorded.size(); ++i)
    CHECK(recorded[i] == graph_key(r.confirmed[i].candidate.graph));
  // The times are the full matrix's: the first one's agrees with scoring it there directly.
  const auto direct = on_full.evaluate({r.confirmed[0].candidate});
  CHECK(r.confirmed[0].evaluation.time_us == Approx(direct[0].time_us));
  // The confirmed candidates are the sample's fastest, in its order.
  double last = 0;
  for (std::size_t i = 0; i < r.confirmed.size(); ++i) {
    double t = -1;
    for (const auto& h : r.sample.history)
      if (graph_key(h.candidate.graph) == graph_key(r.confirmed[i].candidate.graph) &&
          h.evaluation.ok)
        t = t < 0 ? h.evaluation.time_us : std::min(t, h.evaluation.time_us);
    CHECK(t >= last);
    last = t;
  }
}

namespace {
// On the full matrix every candidate but CSR-vector runs wrong.
class OnlyBaselineWorks : public Evaluator {
 public:
  OnlyBaselineWorks(const Csr64& a, std::string baseline_key)
      : inner_(a, "f64"), key_(std::move(baseline_key)) {}
  bool measures() const override { return false; }
  std::string device() const override { return "test"; }
  std::string arch() const override { return "sm_90"; }
  std::vector<Evaluation> evaluate(const std::vector<Candidate>& batch) override {
    auto out = inner_.evaluate(batch);
    for (std::size_t i = 0; i < out.size(); ++i)
      if (graph_key(batch[i].graph) != key_) out[i] = Evaluation{false, true, 0, 0, 0, 1, "wrong"};
    return out;
  }

 private:
  CostModelEvaluator inner_;
  std::string key_;
};
}  // namespace

TEST_CASE("screen: CSR-vector answers when nothing confirmed runs correctly", "[search][screen]") {
  const Csr64 a = search_test::irregular(20000);
  const RowSample sample = sample_rows(a, a.nnz() / 4, 16);
  const auto space = load_search_space(default_search_config_dir() + "/space.json");
  const auto pruning = load_pruning(default_search_config_dir() + "/pruning.json");
  const auto seeds = load_graphs(default_graphs_dir());
  const auto baseline = graph::read_graph(default_graphs_dir() + "/csr-vector.json");
  std::vector<graph::Graph> others;
  for (const auto& g : seeds)
    if (graph_key(g) != graph_key(baseline)) others.push_back(g);
  CostModelEvaluator on_sample(sample.matrix, "f64");
  OnlyBaselineWorks on_full(a, graph_key(baseline));
  SearchOptions opt;
  opt.budget_s = 0;
  opt.max_candidates = 30;
  ScreenOptions screen;
  screen.confirm = 3;
  const auto r = screen_then_confirm(sample.matrix, space,
                                     prune_for(pruning, features::alphasparse_features(a)), others,
                                     baseline, on_sample, on_full, opt, screen);
  // CSR-vector is confirmed (among the sample's best, or added after them), and it is the only
  // one that ran correctly.
  int ok = 0;
  for (const auto& c : r.confirmed)
    if (c.evaluation.ok) {
      ++ok;
      CHECK(graph_key(c.candidate.graph) == graph_key(baseline));
    }
  CHECK(ok == 1);
}
