#include "search/engine.hpp"

#include <catch2/catch.hpp>
#include <csignal>
#include <set>
#include <thread>

#include "core/error.hpp"
#include "features/matrix_features.hpp"
#include "graph/graph.hpp"
#include "search/interrupt.hpp"
#include "search/precheck.hpp"
#include "search/space.hpp"
#include "search_test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::search;

namespace {

struct Setup {
  SearchSpace space = load_search_space(default_search_config_dir() + "/space.json");
  Pruning pruning = load_pruning(default_search_config_dir() + "/pruning.json");
  std::vector<graph::Graph> seeds = load_graphs(default_graphs_dir());
  graph::Graph baseline = graph::read_graph(default_graphs_dir() + "/csr-vector.json");
};

SearchResult predict(const Csr64& a, const Setup& s, std::uint64_t seed, int max_candidates,
                     const PruneSet* prune = nullptr) {
  CostModelEvaluator eval(a, "f64");
  const auto p = prune ? *prune : prune_for(s.pruning, features::alphasparse_features(a));
  SearchOptions opt;
  opt.budget_s = 0;
  opt.max_candidates = max_candidates;
  opt.seed = seed;
  return run_search(a, s.space, p, s.seeds, s.baseline, eval, opt);
}

bool holds_any(const graph::Graph& g, const std::vector<std::string>& ops) {
  for (const auto& op : operator_names(g))
    if (std::find(ops.begin(), ops.end(), op) != ops.end()) return true;
  return false;
}

// Fails some candidates the way a GPU run can (a crash, a wrong answer that claims to be fast).
class FaultyEvaluator : public Evaluator {
 public:
  explicit FaultyEvaluator(const Csr64& a) : inner_(a, "f64") {}
  bool measures() const override { return false; }
  std::string device() const override { return "faulty"; }
  std::string arch() const override { return "sm_90"; }
  std::vector<Evaluation> evaluate(const std::vector<Candidate>& batch) override {
    auto out = inner_.evaluate(batch);
    for (auto& e : out) {
      ++n_;
      if (n_ == 3) e = Evaluation{false, true, 0, 0, 0, -1, "worker lost: killed by SIGSEGV"};
      if (n_ == 5) e = Evaluation{false, true, 0.001, 1e6, 1e6, 0.5, "wrong result"};
    }
    return out;
  }
  int n_ = 0;

 private:
  CostModelEvaluator inner_;
};

}  // namespace

TEST_CASE("predict-only search is deterministic for a seed", "[search]") {
  const Setup s;
  const auto a = search_test::irregular(3000);
  const auto r1 = predict(a, s, 7, 40);
  const auto r2 = predict(a, s, 7, 40);
  REQUIRE(r1.history.size() == r2.history.size());
  for (std::size_t i = 0; i < r1.history.size(); ++i) {
    CHECK(graph_key(r1.history[i].candidate.graph) == graph_key(r2.history[i].candidate.graph));
    CHECK(r1.history[i].evaluation.time_us == r2.history[i].evaluation.time_us);
  }
  CHECK(graph_key(r1.best.candidate.graph) == graph_key(r2.best.candidate.graph));
  CHECK(r1.stats.candidates == 40);
  CHECK(r1.stats.stopped_by == "max-candidates");
  // The baseline comes first, and the answer is never worse than it.
  CHECK(r1.history.front().candidate.origin == "baseline");
  CHECK(r1.best.evaluation.gflops >= r1.baseline.evaluation.gflops);
  CHECK(r1.best.evaluation.ok);
  // Another seed explores differently.
  const auto r3 = predict(a, s, 8, 40);
  bool differs = false;
  for (std::size_t i = 0; i < std::min(r1.history.size(), r3.history.size()); ++i)
    differs = differs ||
              graph_key(r1.history[i].candidate.graph) != graph_key(r3.history[i].candidate.graph);
  CHECK(differs);
}

TEST_CASE("all three levels run: coarse grids, XGBoost fits, fine candidates", "[search]") {
  const Setup s;
  const auto a = search_test::irregular(2000);
  const auto r = predict(a, s, 3, 150);
  CHECK(r.stats.structures >= 3);
  CHECK(r.stats.coarse > r.stats.structures);
  CHECK(r.stats.model_fits >= 1);
  CHECK(r.stats.fine >= 1);
  for (const auto& h : r.history)
    if (h.candidate.level == 3) CHECK(h.candidate.origin != "baseline");
}

TEST_CASE("pruned and banned operators are never proposed", "[search]") {
  const Setup s;
  const auto a = search_test::tridiagonal(4000);  // rows of at most 3 entries, regular
  const auto prune = prune_for(s.pruning, features::alphasparse_features(a));
  const std::vector<std::string> long_row = {"WARP_TOTAL_RED", "SHMEM_TOTAL_RED"};
  REQUIRE(!prune.allows("WARP_TOTAL_RED", {}));
  const auto r = predict(a, s, 11, 120, &prune);
  REQUIRE(r.history.size() > 10);
  int proposed = 0;
  for (const auto& h : r.history) {
    if (h.candidate.origin == "baseline") continue;  // CSR-vector, the reference point
    ++proposed;
    CHECK_FALSE(holds_any(h.candidate.graph, long_row));
    CHECK_FALSE(holds_any(h.candidate.graph, s.pruning.ban));
  }
  CHECK(proposed > 10);

  // A ban list of our own: the operator never appears, on an irregular matrix too.
  auto p2 = prune_for(s.pruning, features::alphasparse_features(search_test::irregular(2000)));
  p2.banned.push_back("BMT_ROW_BLOCK");
  const auto r2 = predict(search_test::irregular(2000), s, 5, 80, &p2);
  for (const auto& h : r2.history)
    if (h.candidate.origin != "baseline")
      CHECK_FALSE(holds_any(h.candidate.graph, {"BMT_ROW_BLOCK"}));
}

TEST_CASE("failed candidates do not stop the search and are never returned", "[search]") {
  const Setup s;
  const auto a = search_test::irregular(2000);
  FaultyEvaluator eval(a);
  SearchOptions opt;
  opt.budget_s = 0;
  opt.max_candidates = 30;
  const auto prune = prune_for(s.pruning, features::alphasparse_features(a));
  const auto r = run_search(a, s.space, prune, s.seeds, s.baseline, eval, opt);
  CHECK(r.stats.candidates == 30);
  CHECK(r.stats.failures >= 2);
  CHECK(r.best.evaluation.ok);
  CHECK(r.best.evaluation.gflops < 1e6);  // the fast wrong one is not the answer
  // Each failure keeps its message and gets a category from its wording.
  int crashes = 0, wrong = 0;
  for (const auto& h : r.history) {
    if (h.evaluation.failure.find("SIGSEGV") != std::string::npos) {
      ++crashes;
      CHECK(h.evaluation.category == failure::kWorkerCrash);
    }
    if (h.evaluation.failure == "wrong result") {
      ++wrong;
      CHECK(h.evaluation.category == failure::kVerification);
    }
  }
  CHECK(crashes == 1);
  CHECK(wrong == 1);
  CHECK(r.stats.failure_log.counts().at(failure::kWorkerCrash) == 1);
  CHECK(r.stats.failure_log.counts().at(failure::kVerification) == 1);
  CHECK(r.stats.failure_log.total() == r.stats.failures);
}

TEST_CASE("Ctrl-C stops a search and keeps the best so far", "[search]") {
  const Setup s;
  const auto a = search_test::irregular(20000);
  CostModelEvaluator eval(a, "f64");
  const auto prune = prune_for(s.pruning, features::alphasparse_features(a));
  InterruptGuard guard;
  SearchOptions opt;
  opt.budget_s = 120;  // far more than the test takes: only the interrupt can end it early
  opt.seed = 2;
  opt.stop = &guard.flag();
  opt.batch = 1;
  auto space = s.space;
  space.max_structures = 100000;
  space.structures.patience = 100000;
  space.structures.t_min = 1e-300;
  std::thread t([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::raise(SIGINT);
  });
  const auto r = run_search(a, space, prune, s.seeds, s.baseline, eval, opt);
  t.join();
  CHECK(guard.interrupted());
  CHECK(r.stats.stopped_by == "interrupted");
  CHECK(r.stats.seconds > 0);
  CHECK(r.best.evaluation.ok);
  CHECK(r.stats.candidates >= 1);
}

TEST_CASE("known formats are scored first, fastest predicted first", "[search]") {
  const Setup s;
  const auto a = search_test::irregular(3000);
  const auto r = predict(a, s, 4, 60);
  const auto prune = prune_for(s.pruning, features::alphasparse_features(a));
  // The seeds the rules allow (CSR-vector is the baseline), each predicted independently.
  CostModelEvaluator model(a, "f64");
  std::vector<std::pair<double, std::string>> expected;  // (predicted µs, name); failures last
  for (const auto& g : s.seeds) {
    bool allowed = g.name != "csr-vector";
    std::vector<std::string> before;
    for (const auto& op : operator_names(g)) {
      allowed = allowed && prune.allows(op, before);
      before.push_back(op);
    }
    if (!allowed || !bound_to_fail(g, MatrixShape::of(a)).empty()) continue;
    const auto e = model.evaluate_one(g);
    expected.push_back({e.ok ? e.time_us : 1e300, g.name});
  }
  REQUIRE(expected.size() >= 4);
  std::stable_sort(expected.begin(), expected.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  REQUIRE(r.history.size() > expected.size() + 1);
  CHECK(r.history[0].candidate.origin == "baseline");
  for (std::size_t k = 0; k < expected.size(); ++k) {
    const auto& h = r.history[k + 1];
    CHECK(h.candidate.origin == "seed:" + expected[k].second);
    if (h.evaluation.ok) CHECK(h.evaluation.time_us == Approx(expected[k].first));
    CHECK(r.stats.seed_order[k]["seed"] == expected[k].second);
  }
  // Exploring (other parameter points, grown structures) comes only after every seed.
  for (std::size_t k = expected.size() + 1; k < r.history.size(); ++k)
    CHECK(r.history[k].candidate.origin != "baseline");
  // The answer is at least as fast as every seed scored.
  for (std::size_t k = 1; k <= expected.size(); ++k)
    CHECK(r.best.evaluation.gflops >= r.history[k].evaluation.gflops);
}

namespace {

// Scores with the cost model but says it measures, as a GPU evaluator does.
class MeasuringStandIn : public Evaluator {
 public:
  explicit MeasuringStandIn(const Csr64& a) : inner_(a, "f64") {}
  bool measures() const override { return true; }
  std::string device() const override { return "stand-in"; }
  std::string arch() const override { return "sm_90"; }
  std::vector<Evaluation> evaluate(const std::vector<Candidate>& batch) override {
    return inner_.evaluate(batch);
  }

 private:
  CostModelEvaluator inner_;
};

// A search with a long budget, scored by `eval` as if measured.
SearchResult measured(const Csr64& a, const Setup& s, Evaluator& eval, int max_candidates,
                      std::uint64_t seed) {
  SearchOptions opt;
  opt.budget_s = 600;
  opt.max_candidates = max_candidates;
  opt.seed = seed;
  return run_search(a, s.space, prune_for(s.pruning, features::alphasparse_features(a)), s.seeds,
                    s.baseline, eval, opt);
}

SearchResult measured_search(const Csr64& a, Setup& s, int min_candidates) {
  MeasuringStandIn eval(a);
  s.space.min_candidates = min_candidates;
  s.space.structures = {0.25, 0.5, 0.02, 2};  // freezes after a few structures
  return measured(a, s, eval, 400, 5);
}

}  // namespace

TEST_CASE("a measured search reheats a frozen annealer until min_candidates", "[search]") {
  Setup s;
  const auto a = search_test::irregular(2000);
  const auto early = measured_search(a, s, 0);
  CHECK(early.stats.stopped_by == "annealing");
  CHECK(early.stats.reheats == 0);
  const auto longer = measured_search(a, s, 150);
  CHECK(longer.stats.reheats >= 1);
  CHECK(longer.stats.candidates > early.stats.candidates);
  // It stops for a limit or an exhausted space once enough were measured, or by annealing after.
  CHECK((longer.stats.candidates >= 150 || longer.stats.stopped_by != "annealing"));
  // Predict-only searches keep the annealing schedule as their only stop.
  const auto predicted = predict(a, s, 5, 400);
  CHECK(predicted.stats.reheats == 0);
}

namespace {

// A measuring stand-in that remembers which structures each batch held.
class BatchRecorder : public MeasuringStandIn {
 public:
  using MeasuringStandIn::MeasuringStandIn;
  int preferred_batch() const override { return 16; }
  std::vector<Evaluation> evaluate(const std::vector<Candidate>& batch) override {
    std::set<std::string> ids;
    for (const auto& c : batch)
      if (c.origin == "grown") ids.insert(c.structure);
    if (!ids.empty()) structures_per_batch.push_back(ids.size());
    return MeasuringStandIn::evaluate(batch);
  }
  std::vector<std::size_t> structures_per_batch;  // of grown structures, in batches that have any
};

}  // namespace

TEST_CASE("a measured search scores structures in waves, one batch for several", "[search]") {
  Setup s;
  const auto a = search_test::irregular(2000);
  BatchRecorder eval(a);
  const auto r = measured(a, s, eval, 120, 3);
  CHECK(r.stats.candidates == 120);
  // Batches of 16 candidates: waves of 16 grown structures.
  REQUIRE(!eval.structures_per_batch.empty());
  const auto most =
      *std::max_element(eval.structures_per_batch.begin(), eval.structures_per_batch.end());
  CHECK(most >= 2);
  CHECK(most <= 16);
  // Each structure is counted once, whatever the wave it came in.
  std::set<std::string> seen;
  for (const auto& h : r.history) seen.insert(h.candidate.structure);
  CHECK(static_cast<std::size_t>(r.stats.structures) + 1 >= seen.size());  // + the baseline
}

TEST_CASE("max_structures ends a measured search only once min_candidates were measured",
          "[search]") {
  Setup s;
  const auto a = search_test::irregular(2000);
  s.space.max_structures = 6;
  s.space.structures = {0.25, 0.99, 0.001, 1000};  // never frozen: only the caps stop it
  const auto run = [&](int min_candidates) {
    s.space.min_candidates = min_candidates;
    MeasuringStandIn eval(a);
    return measured(a, s, eval, 300, 9);
  };
  const auto capped = run(0);
  CHECK(capped.stats.stopped_by == "space");
  const auto longer = run(100);
  CHECK(longer.stats.structures > capped.stats.structures);
  CHECK(longer.stats.candidates >= 100);
  // Predict-only: the cap holds whatever min_candidates says.
  s.space.min_candidates = 0;
  const auto predicted = predict(a, s, 9, 300);
  s.space.min_candidates = 100;
  const auto predicted_min = predict(a, s, 9, 300);
  CHECK(predicted_min.stats.structures == predicted.stats.structures);
  CHECK(predicted_min.stats.candidates == predicted.stats.candidates);
}
