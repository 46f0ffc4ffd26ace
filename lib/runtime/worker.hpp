#pragma once
// Isolation of everything that runs on the GPU: a worker process does the CUDA work, the parent
// only compiles and keeps records. A fault, a sticky CUDA error, a hang (the parent's watchdog
// kills the worker) or a crash ends only the worker; the next request starts a fresh one.
//
// Wire protocol, both directions over one Unix stream socket: a 4-byte little-endian length,
// then that many bytes of JSON. A request is {"job": name, ...}; a reply is
// {"ok": true, ...} or {"ok": false, "error": text}. Bulk data travels through files.
#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sparsetune::runtime {

// How the worker is started. With an argv, fork + exec of argv[0] (normally /proc/self/exe with
// the hidden subcommand, see worker_command()); "--fd N" is appended, naming the socket. With an
// empty argv, fork alone and serve in the child: for tests and CPU-only jobs, since a child that
// is not exec'ed must not use CUDA.
struct WorkerLaunch {
  std::vector<std::string> argv;
};

// The hidden subcommand of the sparsetune executable that serves jobs.
inline constexpr const char* kWorkerSubcommand = "__worker";
// {"/proc/self/exe", "__worker"}: the running program, re-executed as a worker.
WorkerLaunch self_worker_launch();

// Outcome of one request.
struct WorkerReply {
  bool ok = false;           // the job ran and succeeded
  nlohmann::json body;       // the reply ({"ok":..., ...}); null when the worker died
  std::string error;         // why not ok: the job's message, or how the worker ended
  bool worker_lost = false;  // the worker crashed, was killed by the watchdog, or hung up
};

class Worker {
 public:
  explicit Worker(WorkerLaunch launch);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Sends one job and waits at most timeout_s for its reply; starts the worker first if none is
  // running. Never throws for the worker's failure: the reply says what happened.
  WorkerReply call(const nlohmann::json& request, double timeout_s);

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  int starts() const { return starts_; }  // workers started so far (1 + restarts)
  void stop();                            // ends the worker if one runs

 private:
  void start();
  std::string reap(bool kill_first);  // waits for the worker; says how it ended

  WorkerLaunch launch_;
  pid_t pid_ = -1;
  int fd_ = -1;
  int starts_ = 0;
};

// Worker side: serves jobs on socket fd until the parent hangs up; returns the exit status.
// Jobs that need no GPU: "ping", "sleep" {seconds}, "crash" (SIGSEGV), "abort". Every other job
// goes to the GPU job handlers. A CUDA failure is answered, then the worker exits, because the
// CUDA context may be unusable after it.
int worker_serve(int fd);

// Frame I/O, exposed for tests. read_frame returns false on end of stream or a bad frame.
bool write_frame(int fd, const std::string& payload);
bool read_frame(int fd, std::string* payload, double timeout_s, bool* timed_out);

}  // namespace sparsetune::runtime
