#pragma once
// A minimal parallel loop: tasks are handed out one at a time to a few threads. Callers make each
// task write only its own slots, so a result never depends on the thread count.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <thread>
#include <vector>

namespace sparsetune {

// Runs task(k) for k in [0, tasks) on up to `threads` threads; rethrows the first exception.
template <class Fn>
void parallel_for(int tasks, int threads, Fn&& task) {
  threads = std::max(1, std::min(threads, tasks));
  if (threads == 1) {
    for (int k = 0; k < tasks; ++k) task(k);
    return;
  }
  std::atomic<int> next{0};
  std::exception_ptr error;
  std::atomic<bool> has_error{false};
  auto worker = [&] {
    for (int k; (k = next.fetch_add(1)) < tasks;) {
      try {
        task(k);
      } catch (...) {
        if (!has_error.exchange(true)) error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

// Every core, for the passes over all entries of a large tensor (at most 64); the environment
// variable SPARSETUNE_THREADS (1 to 256) sets another count, and tests run the parallel steps on
// more threads than a small machine has cores with it.
inline int all_cores() {
  if (const char* e = std::getenv("SPARSETUNE_THREADS"); e && *e) {
    const int n = std::atoi(e);
    if (n >= 1 && n <= 256) return n;
  }
  return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 64u));
}

// Threads worth starting for `n` items of cheap work: one per 2^16 items, at most all_cores().
inline int threads_for(std::int64_t n) {
  return static_cast<int>(std::clamp<std::int64_t>(n >> 16, 1, all_cores()));
}

// Runs body(begin, end) over `parts` equal consecutive ranges of [0, n), in parallel.
template <class Fn>
void parallel_ranges(std::int64_t n, int parts, Fn&& body) {
  parts = static_cast<int>(std::clamp<std::int64_t>(parts, 1, std::max<std::int64_t>(n, 1)));
  parallel_for(parts, parts, [&](int p) { body(n * p / parts, n * (p + 1) / parts); });
}

}  // namespace sparsetune
