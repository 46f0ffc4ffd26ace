#pragma once
// The three-level search (AlphaSparse §VI). Level 1 grows operator-graph structures (the known
// formats of configs/graphs first, then new ones grown from the current structure or from
// scratch) under the dependency and pruning rules; level 2 scores each structure's coarse
// parameter grid; level 3 trains an XGBoost model on the scores so far and scores only the
// predicted best of the fine grid. Simulated annealing ends levels 1 and 2 early. The CSR-vector
// graph is always scored first, so the answer is never worse than it; then every known format the
// rules allow is scored at its own parameters, ordered by the cost model's prediction, before any
// exploring, so the answer is never worse than the best known format scored within the budget.
// Candidates bound to fail on this matrix (search/precheck.hpp) are pruned before any design.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/matrix.hpp"
#include "search/config.hpp"
#include "search/evaluator.hpp"
#include "search/failure.hpp"

namespace sparsetune::search {

struct Progress {
  int candidates = 0;  // scored so far
  int structures = 0;
  double best_gflops = 0;
  double seconds_left = -1;  // -1: no deadline
};

struct Scored {
  Candidate candidate;
  Evaluation evaluation;
};

struct SearchOptions {
  double budget_s = 60;    // wall-clock limit; 0: no deadline (predict-only runs)
  int max_candidates = 0;  // 0: no limit besides the budget and the annealing
  std::uint64_t seed = 1;
  int batch = 0;  // candidates handed to the evaluator at once; 0: the evaluator's preference
  std::string dtype = "f64";  // of the cost model that orders the seeds
  // The op is the graphs' (the baseline's): grown structures serve it. SpMM: B's columns, for the
  // cost model that orders the seeds.
  std::int64_t spmm_n = 1;
  // Orders the seeds. Null: the evaluator itself when it only predicts (its predictions are then
  // the seeds' scores), else a cost model built here.
  Evaluator* predictor = nullptr;
  // The first this many seeds are tried first, in their order, whatever their predictions (a
  // predictor's pick, such as the row-order model's, goes before the cost model's ranking).
  int pinned_seeds = 0;
  const std::atomic<bool>* stop = nullptr;        // polled: set by Ctrl-C
  std::function<void(const Progress&)> progress;  // after each batch
  // Each candidate as soon as it is scored (tune commits it to the tuning database then, so a
  // killed search keeps every candidate it finished).
  std::function<void(const Scored&)> on_scored;
};

struct SearchStats {
  int structures = 0;      // structures with a candidate scored (not all pruned)
  int candidates = 0;      // candidates scored (the baseline included)
  int failures = 0;        // candidates that could not be designed, ran wrong, or crashed
  FailureLog failure_log;  // the failures by category, with the first messages
  int pruned = 0;          // candidates never designed: bound to fail (precheck.hpp)
  nlohmann::json pruned_first = nlohmann::json::array();  // the first few, with the reason
  nlohmann::json seed_order = nlohmann::json::array();    // seeds as scored: name, prediction
  int coarse = 0, fine = 0;                               // level-2 and level-3 candidates
  int fine_improved = 0;  // level-3 candidates that beat their structure's coarse best
  int model_fits = 0;     // XGBoost models trained
  int reheats = 0;        // times the frozen structure annealer was restarted (min_candidates)
  double seconds = 0;
  std::string stopped_by;           // annealing | budget | max-candidates | interrupted | space
  std::vector<std::string> banned;  // operators the pruning rules ruled out
  std::vector<std::string> rules_applied;  // pruning rules whose conditions held
  nlohmann::json to_json() const;
};

struct SearchResult {
  Scored best;                  // the fastest correct candidate
  Scored baseline;              // CSR-vector
  std::vector<Scored> history;  // every candidate, in the order scored
  SearchStats stats;
};

// `seeds` are complete graphs (their parameters are searched like a grown structure's);
// `baseline` is CSR-vector. Throws Error when no candidate at all is correct.
SearchResult run_search(const Csr64& a, const SearchSpace& space, const PruneSet& prune,
                        const std::vector<graph::Graph>& seeds, const graph::Graph& baseline,
                        Evaluator& eval, const SearchOptions& opt);

// The graphs in a folder of graph JSON files (sorted by file name), each validated.
std::vector<graph::Graph> load_graphs(const std::string& dir);

}  // namespace sparsetune::search
