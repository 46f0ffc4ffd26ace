#include "runtime/worker.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/error.hpp"
#include "runtime/gpu_jobs.hpp"

namespace sparsetune::runtime {

namespace {
constexpr std::uint32_t kMaxFrame = 256u << 20;

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);  // no SIGPIPE if the peer is gone
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// Reads exactly n bytes before the deadline; false on end of stream, error or timeout.
bool read_all(int fd, char* p, std::size_t n, std::chrono::steady_clock::time_point deadline,
              bool* timed_out) {
  while (n > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      *timed_out = true;
      return false;
    }
    pollfd pfd{fd, POLLIN, 0};
    const int r = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return false;
    if (r == 0) continue;
    const ssize_t got = ::recv(fd, p, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

nlohmann::json failure(const std::string& message) { return {{"ok", false}, {"error", message}}; }
}  // namespace

bool write_frame(int fd, const std::string& payload) {
  if (payload.size() > kMaxFrame) return false;
  const auto n = static_cast<std::uint32_t>(payload.size());
  const char len[4] = {static_cast<char>(n & 0xff), static_cast<char>((n >> 8) & 0xff),
                       static_cast<char>((n >> 16) & 0xff), static_cast<char>((n >> 24) & 0xff)};
  return write_all(fd, len, 4) && write_all(fd, payload.data(), payload.size());
}

bool read_frame(int fd, std::string* payload, double timeout_s, bool* timed_out) {
  *timed_out = false;
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::milliseconds(static_cast<long long>(std::max(0.0, timeout_s) * 1000.0));
  unsigned char len[4];
  if (!read_all(fd, reinterpret_cast<char*>(len), 4, deadline, timed_out)) return false;
  const std::uint32_t n = len[0] | (len[1] << 8) | (len[2] << 16) | (std::uint32_t{len[3]} << 24);
  if (n > kMaxFrame) return false;
  payload->assign(n, '\0');
  return read_all(fd, payload->data(), n, deadline, timed_out);
}

WorkerLaunch self_worker_launch() { return {{"/proc/self/exe", kWorkerSubcommand}}; }

Worker::Worker(WorkerLaunch launch) : launch_(std::move(launch)) {}

Worker::~Worker() { stop(); }

void Worker::start() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw Error(std::string("worker: socketpair failed: ") + std::strerror(errno));
  // Everything the child needs is prepared before fork: after it, only exec or the serve loop.
  constexpr int kChildFd = 3;
  std::vector<std::string> args = launch_.argv;
  if (!args.empty()) {
    args.push_back("--fd");
    args.push_back(std::to_string(kChildFd));
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    throw Error(std::string("worker: fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(sv[0]);
    if (args.empty()) {
      // exec would reset the parent's signal handlers (a test framework's, say); do it here, so
      // that a crash ends this worker the ordinary way.
      for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGTERM, SIGINT})
        ::signal(sig, SIG_DFL);
      _exit(worker_serve(sv[1]));
    }
    if (::dup2(sv[1], kChildFd) < 0) _exit(127);  // dup2 clears close-on-exec on the copy
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  ::close(sv[1]);
  pid_ = pid;
  fd_ = sv[0];
  ++starts_;
}

std::string Worker::reap(bool kill_first) {
  if (pid_ <= 0) return "no worker";
  if (kill_first) ::kill(pid_, SIGKILL);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  int status = 0;
  pid_t r;
  // A worker that hung up but is still exiting gets a moment, then the kill.
  for (int i = 0; (r = ::waitpid(pid_, &status, WNOHANG)) == 0 && i < 200; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (r == 0) {
    ::kill(pid_, SIGKILL);
    r = ::waitpid(pid_, &status, 0);
  }
  pid_ = -1;
  if (r < 0) return "worker vanished";
  if (WIFSIGNALED(status))
    return std::string("worker killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  if (WIFEXITED(status)) return "worker exited with status " + std::to_string(WEXITSTATUS(status));
  return "worker ended";
}

void Worker::stop() {
  if (pid_ <= 0) return;
  // Closing the socket asks the worker to leave; reap() kills it if it does not.
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  reap(false);
}

WorkerReply Worker::call(const nlohmann::json& request, double timeout_s) {
  WorkerReply out;
  if (pid_ <= 0) start();
  std::string payload;
  bool timed_out = false;
  if (!write_frame(fd_, request.dump()) || !read_frame(fd_, &payload, timeout_s, &timed_out)) {
    out.worker_lost = true;
    if (timed_out) {
      reap(true);
      out.error = "timed out after " + std::to_string(timeout_s) + " s; worker killed";
    } else {
      out.error = reap(false);
    }
    return out;
  }
  try {
    out.body = nlohmann::json::parse(payload);
  } catch (const std::exception& e) {
    reap(true);
    out.worker_lost = true;
    out.error = std::string("worker sent a malformed reply: ") + e.what();
    return out;
  }
  out.ok = out.body.value("ok", false);
  if (!out.ok) out.error = out.body.value("error", std::string("job failed"));
  if (out.body.value("fatal", false)) {  // the worker leaves after a CUDA failure
    reap(false);
    out.worker_lost = true;
  }
  return out;
}

int worker_serve(int fd) {
  std::string payload;
  for (;;) {
    bool timed_out = false;
    // The parent's watchdog bounds every job; the worker itself waits for work indefinitely.
    if (!read_frame(fd, &payload, 1e9, &timed_out)) return 0;
    nlohmann::json reply;
    bool fatal = false;
    try {
      const auto req = nlohmann::json::parse(payload);
      const std::string job = req.value("job", std::string());
      if (job == "ping") {
        reply = {{"ok", true}, {"pid", static_cast<long long>(::getpid())}};
      } else if (job == "sleep") {
        std::this_thread::sleep_for(std::chrono::duration<double>(req.value("seconds", 1.0)));
        reply = {{"ok", true}};
      } else if (job == "crash") {
        ::raise(SIGSEGV);
      } else if (job == "abort") {
        std::abort();
      } else {
        reply = handle_gpu_job(job, req, &fatal);
        reply["ok"] = true;
      }
    } catch (const std::exception& e) {
      reply = failure(e.what());
    }
    if (fatal) reply["fatal"] = true;
    if (!write_frame(fd, reply.dump())) return 1;
    if (fatal) return 3;
  }
}

}  // namespace sparsetune::runtime
