#include "io/interrupt_cleanup.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <mutex>

namespace sparsetune::io {

namespace {

// Fixed storage: the handler may only read it (no allocation, no locks in a signal handler).
constexpr int kSlots = 32;
constexpr std::size_t kPathBytes = 4096;
char paths[kSlots][kPathBytes];
std::atomic<bool> used[kSlots];
std::mutex claim;  // between threads claiming slots, never taken by the handler

extern "C" void remove_and_reraise(int sig) {
  for (int i = 0; i < kSlots; ++i)
    if (used[i].load()) ::unlink(paths[i]);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// Checked at every registration (three system calls), not once: a handler set to the default
// since (a forked child's) gets ours again.
void install() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    // A handler the program or its caller set (or an ignored signal) is left alone.
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
    struct sigaction sa {};
    sa.sa_handler = remove_and_reraise;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace

int remove_on_interrupt(const std::string& path) {
  if (path.size() >= kPathBytes) return -1;
  std::lock_guard<std::mutex> lock(claim);
  install();
  for (int i = 0; i < kSlots; ++i)
    if (!used[i].load()) {
      std::memcpy(paths[i], path.c_str(), path.size() + 1);
      used[i].store(true);
      return i;
    }
  return -1;
}

void forget_on_interrupt(int slot) {
  if (slot >= 0 && slot < kSlots) used[slot].store(false);
}

}  // namespace sparsetune::io
