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
  // candidates still being prepared or measured when the search stops. Measured on an H200 at
  // the default budget: the search ran 0.8, 5.6 and 5.9 s past its share and the final steps
  // took 4.3, 12.6 and 15.2 s on G3_circuit (9.2M entries and rows), kron20 (17.1M) and a
  // 27-point 100^3 stencil (27.5M); 0.65 µs per entry and row covers the worst of them.
  if (gpu) s += 3.0 + 0.65e-6 * entries;
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
