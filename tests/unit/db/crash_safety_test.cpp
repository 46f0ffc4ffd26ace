// The tuning database under faults: a writer killed with SIGKILL at random moments, again and
// again, leaves a file that passes SQLite's integrity check and keeps every row it committed;
// two processes writing one database at once lose nothing; a truncated or foreign file given to
// merge is refused by name and leaves the target unchanged.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "core/error.hpp"
#include "db/tuning_db.hpp"
#include "test_support.hpp"

using namespace sparsetune;
using sparsetune::db::Measurement;
using sparsetune::db::TuningDb;

namespace {

// Row `i` of writer `w`: its fields are derived from (w, i), so a torn row would show.
Measurement row(int w, std::int64_t i) {
  Measurement m;
  m.fingerprint = "csr1-crash" + std::to_string(w);
  m.op = "spmv";
  m.dtype = "f64";
  m.device = "Test GPU";
  m.arch = "sm_90";
  m.tool_version = "0.1.0";
  m.candidate = "graph/" + std::to_string(w) + "-" + std::to_string(i);
  m.graph = std::string(200 + i % 50, 'g');  // rows of several sizes, some spanning pages
  m.params = "{\"i\":" + std::to_string(i) + "}";
  m.time_us = 1.0 + static_cast<double>(i);
  m.gflops = 2.0 * static_cast<double>(i);
  return m;
}

bool whole(const Measurement& m) {
  const auto dash = m.candidate.find('-');
  if (m.candidate.rfind("graph/", 0) != 0 || dash == std::string::npos) return false;
  const int w = std::stoi(m.candidate.substr(6, dash - 6));
  const std::int64_t i = std::stoll(m.candidate.substr(dash + 1));
  const Measurement want = row(w, i);
  return m.fingerprint == want.fingerprint && m.graph == want.graph && m.params == want.params &&
         m.time_us == want.time_us && m.gflops == want.gflops;
}

// A child that writes rows `from`, `from + 1`, ... of writer `w` (up to `count`, or until killed)
// and exits 0, or 3 when the database refuses a write.
pid_t spawn_writer(const std::string& path, int w, std::int64_t from, std::int64_t count,
                   int start_fd = -1) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  if (start_fd >= 0) {
    char c;
    if (read(start_fd, &c, 1) != 1) _exit(4);
  }
  try {
    TuningDb db(path);
    for (std::int64_t i = from; count < 0 || i < from + count; ++i) db.add(row(w, i));
  } catch (...) {
    _exit(3);
  }
  _exit(0);
}

std::int64_t integrity_and_count(const std::string& path) {
  TuningDb db(path);
  REQUIRE(db.integrity_check() == "ok");
  const auto all = db.measurements();
  for (const auto& m : all) {
    INFO(m.candidate);
    REQUIRE(whole(m));
  }
  return static_cast<std::int64_t>(all.size());
}

}  // namespace

TEST_CASE("a writer killed with SIGKILL again and again never damages the database",
          "[db][crash]") {
  testing::TempDir dir("sparsetune-db-crash");
  const std::string path = dir.file("tuning.db");
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> pause_us(200, 30000);
  std::int64_t committed = 0;
  int kills = 0;
  for (int round = 0; round < 40; ++round) {
    const pid_t pid = spawn_writer(path, 0, committed, -1);
    REQUIRE(pid > 0);
    std::this_thread::sleep_for(std::chrono::microseconds(pause_us(rng)));
    kill(pid, SIGKILL);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ++kills;
    // The file is consistent (SQLite's own check) and no committed row is lost or torn.
    const std::int64_t now = integrity_and_count(path);
    INFO("round " << round << ": " << now << " rows after " << committed);
    REQUIRE(now >= committed);
    committed = now;  // the next writer goes on from the first row not yet stored
  }
  CHECK(kills >= 30);    // the writers really were killed mid-run
  CHECK(committed > 0);  // and wrote something between kills
  // A final writer finishes cleanly on top of the survivors.
  const pid_t pid = spawn_writer(path, 0, committed, 25);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(integrity_and_count(path) == committed + 25);
}

TEST_CASE("two processes writing one database at once lose nothing", "[db][crash]") {
  testing::TempDir dir("sparsetune-db-concurrent");
  const std::string path = dir.file("tuning.db");  // new: both also race to create it
  int start[2];
  REQUIRE(pipe(start) == 0);
  const pid_t a = spawn_writer(path, 1, 0, 400, start[0]);
  const pid_t b = spawn_writer(path, 2, 0, 400, start[0]);
  REQUIRE(write(start[1], "ab", 2) == 2);  // both start together
  close(start[0]);
  close(start[1]);
  for (pid_t p : {a, b}) {
    int status = 0;
    REQUIRE(waitpid(p, &status, 0) == p);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  TuningDb db(path);
  std::set<std::string> seen;
  for (const auto& m : db.measurements()) {
    CHECK(whole(m));
    seen.insert(m.candidate);
  }
  CHECK(seen.size() == 800);
  for (int w : {1, 2})
    for (std::int64_t i = 0; i < 400; ++i)
      CHECK(seen.count("graph/" + std::to_string(w) + "-" + std::to_string(i)) == 1);
}

TEST_CASE("merge refuses a truncated or foreign file and changes nothing", "[db][crash]") {
  testing::TempDir dir("sparsetune-db-merge-bad");
  const std::string good = dir.file("good.db"), target = dir.file("target.db");
  {
    TuningDb g(good);
    for (std::int64_t i = 0; i < 300; ++i) g.add(row(5, i));
  }
  {
    TuningDb t(target);
    t.add(row(6, 0));
  }
  // The good file, cut at several places (its WAL checkpointed into it when it was closed).
  const auto size = std::filesystem::file_size(good);
  REQUIRE(size > 8192);
  std::ifstream in(good, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const std::uintmax_t cut :
       {size / 2, size - 1000, std::uintmax_t{4096}, std::uintmax_t{50}, std::uintmax_t{0}}) {
    INFO("cut at " << cut);
    const std::string bad = dir.file("cut" + std::to_string(cut) + ".db");
    std::ofstream(bad, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(cut));
    TuningDb t(target);
    try {
      t.merge(bad);
      FAIL("merged a truncated file");
    } catch (const Error& e) {
      const std::string what = e.what();
      CHECK(what.find(bad) != std::string::npos);
    }
    CHECK(t.measurements().size() == 1);
  }
  // Text, and a SQLite file of another program.
  const std::string text = dir.file("notes.db");
  std::ofstream(text) << "not a database\n";
  TuningDb t(target);
  CHECK_THROWS_WITH(t.merge(text), Catch::Contains(text));
  CHECK(t.measurements().size() == 1);
  // The good file itself merges.
  CHECK(t.merge(good) == 300);
  CHECK(t.measurements().size() == 301);
}
