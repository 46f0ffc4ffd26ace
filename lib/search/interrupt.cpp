#include "search/interrupt.hpp"

#include <signal.h>
#include <unistd.h>

namespace sparsetune::search {

namespace {

std::atomic<bool> g_flag{false};
struct sigaction g_previous;

void on_sigint(int) {
  if (g_flag.exchange(true)) _exit(130);  // the second Ctrl-C
  static const char msg[] = "\ninterrupted: finishing with the best so far (Ctrl-C again quits)\n";
  [[maybe_unused]] const auto n = write(2, msg, sizeof msg - 1);
}

}  // namespace

InterruptGuard::InterruptGuard() {
  g_flag = false;
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &g_previous);
}

InterruptGuard::~InterruptGuard() { sigaction(SIGINT, &g_previous, nullptr); }

const std::atomic<bool>& InterruptGuard::flag() const { return g_flag; }

}  // namespace sparsetune::search
