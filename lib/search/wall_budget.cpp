#include "search/wall_budget.hpp"

#include <algorithm>

namespace sparsetune::search {

double final_steps_estimate(std::int64_t rows, std::int64_t nnz, bool gpu) {
  // The Designer and Optimizer on the full matrix, the interpreter and the reference, the files:
  // about 0.2 µs per entry and row on one core (a generated Kronecker graph and a 27-point
  // stencil), taken as 0.3; NVRTC about a second.
  const double entries = static_cast<double>(nnz) + static_cast<double>(rows);
  double s = 1.5 + 0.3e-6 * entries;
  // With a GPU: the cuSPARSE baselines (a worker, the matrix uploaded, five algorithms) and the
  // candidates still being designed when the search stops (about 11 s and 5 s on a 26M-entry
  // stencil with the earlier search, which did not stop in time).
  if (gpu) s += 3.0 + 0.4e-6 * entries;
  return s;
}

double WallBudget::elapsed() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

double WallBudget::plan_search(double reserve_s) {
  before_ = elapsed();
  reserve_ = reserve_s;
  if (budget_s_ <= 0) return search_ = 0;
  return search_ = std::max(1e-3, budget_s_ - before_ - reserve_);
}

nlohmann::json WallBudget::to_json() const {
  return {{"budget_s", budget_s_},
          {"spent_before_search_s", before_},
          {"reserved_for_final_s", reserve_},
          {"search_budget_s", search_},
          {"wall_s", elapsed()}};
}

}  // namespace sparsetune::search
