#include "search/child_run.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "core/error.hpp"

namespace sparsetune::search {

std::string ChildResult::how() const {
  if (interrupted) return "interrupted";
  if (timed_out) return "timed out after " + std::to_string(static_cast<long>(seconds)) + " s";
  if (signal) return "killed by signal " + std::to_string(signal);
  return "exit status " + std::to_string(exit_code);
}

ChildResult run_child(const std::vector<std::string>& argv, const std::string& stdout_path,
                      const std::string& stderr_path, double timeout_s,
                      const std::atomic<bool>* stop) {
  if (argv.empty()) throw Error("run_child: no program");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int out = open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0 || err < 0) {
    if (out >= 0) close(out);
    if (err >= 0) close(err);
    throw Error(stderr_path + ": cannot write the child's output");
  }
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    close(out);
    close(err);
    throw Error("cannot start a child process");
  }
  if (pid == 0) {
    dup2(out, 1);
    dup2(err, 2);
    setpgid(0, 0);  // its own group: a timeout ends the child and whatever it started
    execv(args[0], args.data());
    _exit(127);
  }
  close(out);
  close(err);
  ChildResult r;
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  int status = 0;
  double killed_at = -1;
  for (;;) {
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    const double t = elapsed();
    const bool stopping = stop && stop->load();
    if (killed_at < 0 && ((timeout_s > 0 && t >= timeout_s) || stopping)) {
      (stopping ? r.interrupted : r.timed_out) = true;
      kill(-pid, SIGTERM);
      kill(pid, SIGTERM);
      killed_at = t;
    } else if (killed_at >= 0 && t - killed_at > 10) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  r.seconds = elapsed();
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

std::string last_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  if (last.size() > 400) last.resize(400);
  return last;
}

}  // namespace sparsetune::search
