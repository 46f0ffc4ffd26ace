// Output folders replaced as a whole: all new files or all previous ones, even when the writer is
// killed; files the run does not write are kept; the current folder is never replaced.
#include "io/staged_folder.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/error.hpp"
#include "io/file_bytes.hpp"
#include "test_support.hpp"

using namespace sparsetune;
namespace fs = std::filesystem;

namespace {
std::string slurp(const fs::path& p) { return io::read_file(p.string()); }
int hidden_entries(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().filename().string()[0] == '.';
  return n;
}
}  // namespace

TEST_CASE("a staged folder appears whole, keeps other files, and replaces the old one",
          "[io][staged]") {
  testing::TempDir t("sparsetune-staged");
  const fs::path out = t.path / "out";
  {
    io::StagedFolder s(out.string());
    CHECK(s.add("a.txt", "one") == (out / "a.txt").string());
    s.add("b.txt", "two");
    CHECK_FALSE(fs::exists(out));  // nothing before commit
    s.commit();
    CHECK(s.files() ==
          std::vector<std::string>{(out / "a.txt").string(), (out / "b.txt").string()});
  }
  CHECK(slurp(out / "a.txt") == "one");
  CHECK(slurp(out / "b.txt") == "two");
  std::ofstream(out / "notes.txt") << "mine";
  {
    io::StagedFolder s(out.string());
    s.add("a.txt", "ONE");
    s.add("b.txt", "TWO");
    s.commit();
  }
  CHECK(slurp(out / "a.txt") == "ONE");
  CHECK(slurp(out / "b.txt") == "TWO");
  CHECK(slurp(out / "notes.txt") == "mine");  // a file this run does not write stays
  CHECK(hidden_entries(t.path) == 0);         // no staging folder left behind
}

TEST_CASE("one run's outputs drop what an earlier run wrote, and keep the user's files",
          "[io][staged]") {
  using Outputs = io::StagedFolder::Outputs;
  testing::TempDir t("sparsetune-staged");
  const fs::path out = t.path / "out";
  const auto names = [&] {
    std::set<std::string> n;
    for (const auto& e : fs::directory_iterator(out)) n.insert(e.path().filename().string());
    return n;
  };
  {  // a tune: its kernel, its report, a plot
    io::StagedFolder s(out.string(), Outputs::one_run);
    s.add("kernel.cu", "spmm");
    s.add("report.json", "spmm report");
    s.add("plot.png", "png");
    s.commit();
  }
  std::ofstream(out / "notes.txt") << "mine";
  {  // an emit into the same folder: no report, no plot
    io::StagedFolder s(out.string(), Outputs::one_run);
    s.add("kernel.cu", "spmv");
    s.commit();
  }
  CHECK(names() == std::set<std::string>{"kernel.cu", "notes.txt", ".sparsetune-outputs"});
  CHECK(slurp(out / "kernel.cu") == "spmv");
  CHECK(slurp(out / "notes.txt") == "mine");
  CHECK(slurp(out / ".sparsetune-outputs") == "kernel.cu\n");
  // A folder of gathered files (models) keeps every other file, whoever wrote it.
  {
    io::StagedFolder s(out.string());
    s.add("model.json", "m");
    s.commit();
  }
  CHECK(names() ==
        std::set<std::string>{"kernel.cu", "model.json", "notes.txt", ".sparsetune-outputs"});
  // A folder without the list (written before it existed) keeps its files.
  fs::remove(out / ".sparsetune-outputs");
  {
    io::StagedFolder s(out.string(), Outputs::one_run);
    s.add("report.json", "r");
    s.commit();
  }
  CHECK(names() == std::set<std::string>{"kernel.cu", "model.json", "notes.txt", "report.json",
                                         ".sparsetune-outputs"});
  CHECK(hidden_entries(t.path) == 0);
}

TEST_CASE("a staged folder never committed leaves the previous one as it was", "[io][staged]") {
  testing::TempDir t("sparsetune-staged");
  const fs::path out = t.path / "out";
  {
    io::StagedFolder s(out.string());
    s.add("a.txt", "old");
    s.commit();
  }
  {
    io::StagedFolder s(out.string());
    s.add("a.txt", "new");  // then an exception, say: no commit
  }
  CHECK(slurp(out / "a.txt") == "old");
  CHECK(hidden_entries(t.path) == 0);
  // A writer killed with SIGKILL after staging: the previous outputs are intact.
  const pid_t pid = fork();
  if (pid == 0) {
    io::StagedFolder s(out.string());
    s.add("a.txt", "killed");
    s.add("b.txt", "killed");
    raise(SIGKILL);
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFSIGNALED(status));
  CHECK(slurp(out / "a.txt") == "old");
  CHECK_FALSE(fs::exists(out / "b.txt"));
}

TEST_CASE("a staged folder refuses the current folder, its parents and folders in the way",
          "[io][staged]") {
  testing::TempDir t("sparsetune-staged");
  const auto cwd = fs::current_path();
  fs::current_path(t.path);
  CHECK_THROWS_WITH(io::StagedFolder("."), Catch::Contains("a name of its own"));
  fs::create_directories("inner");
  fs::current_path(t.path / "inner");
  CHECK_THROWS_WITH(io::StagedFolder(t.path.string()), Catch::Contains("holds it"));
  fs::current_path(cwd);
  std::ofstream(t.path / "file") << "x";
  CHECK_THROWS_WITH(io::StagedFolder((t.path / "file").string()), Catch::Contains("not a folder"));
  // Checked up front too, before a command's work; a mount point cannot be renamed over.
  CHECK_THROWS_WITH(io::StagedFolder::check_target((t.path / "file").string()),
                    Catch::Contains("not a folder"));
  CHECK_NOTHROW(io::StagedFolder::check_target((t.path / "new" / "out").string()));
  if (fs::is_directory("/proc/self"))
    CHECK_THROWS_WITH(io::StagedFolder::check_target("/proc"), Catch::Contains("mount point"));
  fs::create_directories(t.path / "out" / "sub");
  io::StagedFolder s((t.path / "out").string());
  s.add("a.txt", "x");
  CHECK_THROWS_WITH(s.commit(), Catch::Contains("sub, which is not a plain file"));
  CHECK(fs::is_directory(t.path / "out" / "sub"));
  CHECK_FALSE(fs::exists(t.path / "out" / "a.txt"));
}

TEST_CASE("a file being written is removed when the writer is interrupted", "[io]") {
  testing::TempDir t("sparsetune-interrupt");
  const fs::path out = t.path / "big.mtx";
  io::write_file_atomic(out.string(), "old");
  for (const int sig : {SIGTERM, SIGINT, SIGHUP}) {
    const pid_t pid = fork();
    if (pid == 0) {
      // The test runner's own handlers are not the program's: start from the defaults.
      signal(sig, SIG_DFL);
      io::AtomicFile f(out.string());
      f.write(std::string(1 << 20, 'x'));
      raise(sig);
      _exit(0);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    INFO("signal " << sig);
    // Ended by the signal as before (not exiting normally), and the temporary is gone.
    CHECK((WIFSIGNALED(status) && WTERMSIG(status) == sig));
    CHECK(hidden_entries(t.path) == 0);
    CHECK(slurp(out) == "old");
  }
}

TEST_CASE("a staging folder is removed when the run is interrupted before commit", "[io][staged]") {
  testing::TempDir t("sparsetune-interrupt-staged");
  const fs::path out = t.path / "out";
  {
    io::StagedFolder s(out.string());
    s.add("kernel.cu", "old");
    s.commit();
  }
  for (const int sig : {SIGTERM, SIGINT}) {
    const pid_t pid = fork();
    if (pid == 0) {
      signal(sig, SIG_DFL);
      io::StagedFolder s(out.string());
      // More entries than the handler reads in one system call, a file half written and an
      // empty folder a program made there.
      for (int i = 0; i < 2000; ++i) s.add("part-" + std::to_string(i) + ".bin", "x");
      io::AtomicFile f(s.staging_dir() + "/format.bin");
      f.write(std::string(1 << 16, 'x'));
      fs::create_directory(s.staging_dir() + "/scratch");
      raise(sig);
      _exit(0);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    INFO("signal " << sig);
    CHECK((WIFSIGNALED(status) && WTERMSIG(status) == sig));
    CHECK(hidden_entries(t.path) == 0);  // no staging folder left
    CHECK(slurp(out / "kernel.cu") == "old");
    CHECK(std::distance(fs::directory_iterator(out), fs::directory_iterator()) == 1);
  }
}
