#pragma once
// The wall-clock budget of a whole `tune` command (reading, features, the search, the final CPU
// check, compile and files, the cuSPARSE baselines): the clock starts when the command does, and
// the search gets what is left once the steps after it are reserved, estimated from the matrix
// size.
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>

namespace sparsetune::search {

// Seconds the steps after the search take, estimated from the matrix size (deliberately high):
// the winner designed on the full matrix, checked by the CPU interpreter against the fp64
// reference, compiled by NVRTC and written; with a GPU, the cuSPARSE baselines measured too and
// one candidate still being designed when the search stops.
double final_steps_estimate(std::int64_t rows, std::int64_t nnz, bool gpu);

class WallBudget {
 public:
  using Clock = std::chrono::steady_clock;
  // budget_s 0: no budget (predict-only runs).
  explicit WallBudget(double budget_s, Clock::time_point start = Clock::now())
      : budget_s_(budget_s), start_(start) {}

  double elapsed() const;
  // Fixes the reserve for the final steps and returns the search's own budget: what is left of
  // the budget after the time spent so far and the reserve, at least a millisecond (the search
  // then scores only its CSR-vector baseline); 0 when there is no budget.
  double plan_search(double reserve_s);
  // {"budget_s", "spent_before_search_s", "reserved_for_final_s", "search_budget_s", "wall_s"}
  nlohmann::json to_json() const;
  double reserved() const { return reserve_; }  // for the final steps, once planned
  // The whole-command budget under which the search would get at least `search_s` seconds.
  double budget_for_search(double search_s) const { return before_ + reserve_ + search_s; }

 private:
  double budget_s_;
  Clock::time_point start_;
  double before_ = 0, reserve_ = 0, search_ = 0;
};

}  // namespace sparsetune::search
