#pragma once
// The readers' parallel loop (core/parallel_for.hpp) and their thread count.
#include <algorithm>
#include <thread>

#include "core/parallel_for.hpp"

namespace sparsetune::io::detail {

using sparsetune::parallel_for;

inline int thread_count(int requested) {
  if (requested > 0) return requested;
  return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
}

}  // namespace sparsetune::io::detail
