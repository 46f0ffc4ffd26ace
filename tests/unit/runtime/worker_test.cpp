// The worker process without a GPU: its protocol, and the parent surviving a crash, an abort
// and a hang of the worker, each followed by a fresh worker.
#include "runtime/worker.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <thread>

using namespace sparsetune::runtime;

TEST_CASE("frames cross a socket whole") {
  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  const std::string big(300000, 'x');
  // A writer thread: the payload is larger than the socket buffer.
  std::thread writer([&] {
    CHECK(write_frame(sv[0], "{\"a\":1}"));
    CHECK(write_frame(sv[0], big));
    CHECK(write_frame(sv[0], ""));
  });
  std::string got;
  bool timed_out = true;
  REQUIRE(read_frame(sv[1], &got, 5, &timed_out));
  CHECK(got == "{\"a\":1}");
  REQUIRE(read_frame(sv[1], &got, 5, &timed_out));
  CHECK(got == big);
  REQUIRE(read_frame(sv[1], &got, 5, &timed_out));
  CHECK(got.empty());
  writer.join();
  CHECK(!read_frame(sv[1], &got, 0.2, &timed_out));
  CHECK(timed_out);
  ::close(sv[0]);
  CHECK(!read_frame(sv[1], &got, 5, &timed_out));
  CHECK(!timed_out);
  ::close(sv[1]);
}

TEST_CASE("the parent survives a worker's crash, abort and hang") {
  Worker w(WorkerLaunch{});  // fork without exec: the jobs here need no CUDA
  auto r = w.call({{"job", "ping"}}, 10);
  REQUIRE(r.ok);
  const auto first_pid = r.body["pid"].get<long long>();
  CHECK(first_pid == w.pid());

  r = w.call({{"job", "crash"}}, 10);
  CHECK(!r.ok);
  CHECK(r.worker_lost);
  CHECK(r.error.find("signal 11") != std::string::npos);
  CHECK(!w.running());

  r = w.call({{"job", "ping"}}, 10);
  REQUIRE(r.ok);
  CHECK(r.body["pid"].get<long long>() != first_pid);
  CHECK(w.starts() == 2);

  r = w.call({{"job", "abort"}}, 10);
  CHECK(r.worker_lost);
  CHECK(r.error.find("signal 6") != std::string::npos);

  r = w.call({{"job", "sleep"}, {"seconds", 30}}, 0.3);
  CHECK(r.worker_lost);
  CHECK(r.error.find("timed out") != std::string::npos);

  r = w.call({{"job", "sleep"}, {"seconds", 0.01}}, 10);
  CHECK(r.ok);
  CHECK(w.starts() == 4);
}

TEST_CASE("a job's own error is answered and the worker stays") {
  Worker w(WorkerLaunch{});
  auto r = w.call({{"job", "load"}, {"op", "spmv"}, {"path", "/nonexistent/problem"}}, 10);
  CHECK(!r.ok);
  CHECK(!r.worker_lost);
  CHECK(r.error.find("/nonexistent/problem") != std::string::npos);
  r = w.call({{"job", "no-such-job"}}, 10);
  CHECK(!r.ok);
  CHECK(r.error.find("no-such-job") != std::string::npos);
  CHECK(w.call({{"job", "ping"}}, 10).ok);
  CHECK(w.starts() == 1);
}

TEST_CASE("a worker executable that cannot start is a lost worker, not a crash") {
  Worker w(WorkerLaunch{{"/nonexistent/sparsetune", "__worker"}});
  const auto r = w.call({{"job", "ping"}}, 10);
  CHECK(!r.ok);
  CHECK(r.worker_lost);
  CHECK(r.error.find("127") != std::string::npos);
}
