#include "runtime/thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace sparsetune::runtime {

void parallel_for(std::int64_t count, const std::function<void(std::int64_t)>& fn,
                  unsigned threads) {
  if (count <= 0) return;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::int64_t>(threads, count));
  std::atomic<std::int64_t> next{0};
  std::exception_ptr first;
  std::mutex mu;
  auto work = [&] {
    for (std::int64_t i; (i = next++) < count;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!first) first = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (first) std::rethrow_exception(first);
}

}  // namespace sparsetune::runtime
