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
  // candidates still being prepared or measured when the search stops. The H200 batch of
  // 2026-11-24 (57 matrices, 15 s budget) took 0.3 s after the search on its median matrix (under
  // 10^5 entries and rows) and 1.1-1.9 µs per entry and row above 4·10^6 (G3_circuit 10.3 s,
  // powerlaw_1m 17.8 s with CSR-vector); at the default budget G3_circuit, kron20 and a 27-point
  // 100^3 stencil took 5.1, 18.2 and 21.1 s including the search's overrun. A fixed 0.3 s and 0.9
  // µs per entry and row more cover all but the powerlaw matrix without taking seconds from the
  // search of small matrices, whose final steps are short.
  if (gpu) s += 0.3 + 0.9e-6 * entries;
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
