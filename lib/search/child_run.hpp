#pragma once
// Runs a program in a child process under a wall-clock limit (fork + exec): a child that hangs or
// crashes ends alone, and the caller learns how it ended. Its stdout and stderr go to files.
#include <atomic>
#include <string>
#include <vector>

namespace sparsetune::search {

struct ChildResult {
  int exit_code = -1;        // when it exited
  int signal = 0;            // when a signal ended it
  bool timed_out = false;    // killed at the limit (TERM, then KILL after a grace period)
  bool interrupted = false;  // `stop` was set while it ran: it was stopped
  double seconds = 0;
  bool ok() const { return exit_code == 0 && signal == 0 && !timed_out && !interrupted; }
  // "exit status 2", "killed by signal 11", "timed out after 90 s", ...
  std::string how() const;
};

// argv[0] is the program's path. `timeout_s` <= 0: no limit. `stop` is polled.
ChildResult run_child(const std::vector<std::string>& argv, const std::string& stdout_path,
                      const std::string& stderr_path, double timeout_s,
                      const std::atomic<bool>* stop = nullptr);

// The last non-empty line of a text file ("" when none), cut to 400 characters.
std::string last_line(const std::string& path);

}  // namespace sparsetune::search
