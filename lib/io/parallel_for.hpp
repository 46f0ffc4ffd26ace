#pragma once
// A minimal parallel loop for the readers: tasks are handed out one at a time to a few threads.
#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <vector>

namespace sparsetune::io::detail {

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

inline int thread_count(int requested) {
  if (requested > 0) return requested;
  return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
}

}  // namespace sparsetune::io::detail
