#pragma once
// Ctrl-C during a search: the first SIGINT sets a flag the search polls (it stops and the best so
// far is emitted); a second one ends the program at once (exit status 130).
#include <atomic>

namespace sparsetune::search {

class InterruptGuard {
 public:
  InterruptGuard();   // installs the handler (the flag starts clear)
  ~InterruptGuard();  // restores the previous handler
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  const std::atomic<bool>& flag() const;
  bool interrupted() const { return flag().load(); }
};

}  // namespace sparsetune::search
