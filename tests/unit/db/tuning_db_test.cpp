// The tuning database: schema, cache lookups, de-duplication, merging, and bad files.
#include "db/tuning_db.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "test_support.hpp"

using namespace sparsetune;
using sparsetune::db::Measurement;
using sparsetune::db::TuningDb;

namespace {
Measurement sample(const std::string& candidate, double time_us, bool ok = true) {
  Measurement m;
  m.fingerprint = "csr1-0123456789abcdef";
  m.op = "spmv";
  m.dtype = "f32";
  m.n = 1;
  m.device = "Test GPU";
  m.arch = "sm_90";
  m.tool_version = "0.1.0";
  m.candidate = candidate;
  m.params = R"({"threads":256})";
  m.time_us = time_us;
  m.gflops = 2.0 / time_us;
  m.error = 1e-7;
  m.ok = ok;
  if (!ok) m.failure = "illegal address";
  return m;
}
}  // namespace

TEST_CASE("a new database answers best() with the fastest successful row", "[db]") {
  testing::TempDir dir("sparsetune-db-test");
  TuningDb db(dir.file("nested/folder/tuning.db"));
  CHECK_FALSE(db.best("csr1-0123456789abcdef", "spmv", "f32", 1, "Test GPU"));
  db.add(sample("graph/a", 12.0));
  db.add(sample("graph/b", 7.5));
  db.add(sample("graph/c", 3.0, /*ok=*/false));  // faster but failed: never the answer
  auto best = db.best("csr1-0123456789abcdef", "spmv", "f32", 1, "Test GPU");
  REQUIRE(best);
  CHECK(best->candidate == "graph/b");
  CHECK(best->time_us == 7.5);
  CHECK(best->params == R"({"threads":256})");
  // Other device, dtype or n: no answer.
  CHECK_FALSE(db.best("csr1-0123456789abcdef", "spmv", "f32", 1, "Other GPU"));
  CHECK_FALSE(db.best("csr1-0123456789abcdef", "spmv", "f64", 1, "Test GPU"));
  CHECK_FALSE(db.best("csr1-0123456789abcdef", "spmm", "f32", 1, "Test GPU"));
}

TEST_CASE("rows persist, identical rows are stored once, stats count them", "[db]") {
  testing::TempDir dir("sparsetune-db-test");
  const auto path = dir.file("tuning.db");
  {
    TuningDb db(path);
    db.put_matrix({"csr1-0123456789abcdef", "m", 3, 4, 5, R"({"nnz":5})"});
    db.add(sample("graph/a", 12.0));
    db.add(sample("graph/a", 12.0));
    db.add(sample("graph/x", 1.0, false));
  }
  TuningDb db(path);
  auto all = db.measurements();
  REQUIRE(all.size() == 2);
  CHECK(all[1].failure == "illegal address");
  CHECK_FALSE(all[1].ok);
  auto m = db.matrix("csr1-0123456789abcdef");
  REQUIRE(m);
  CHECK(m->rows == 3);
  CHECK(m->features == R"({"nnz":5})");
  auto st = db.stats();
  CHECK(st.matrices == 1);
  CHECK(st.measurements == 2);
  CHECK(st.failures == 1);
  REQUIRE(st.per_device.size() == 1);
  CHECK(st.per_device[0] == std::make_pair(std::string("Test GPU"), std::int64_t{2}));
}

TEST_CASE("merge copies new rows once and keeps the best answer", "[db]") {
  testing::TempDir dir("sparsetune-db-test");
  TuningDb a(dir.file("a.db"));
  a.add(sample("graph/a", 12.0));
  {
    TuningDb b(dir.file("b.db"));
    b.put_matrix({"csr1-0123456789abcdef", "m", 3, 4, 5, "{}"});
    b.add(sample("graph/a", 12.0));  // already in a
    b.add(sample("graph/fast", 2.0));
  }
  CHECK(a.merge(dir.file("b.db")) == 1);
  CHECK(a.merge(dir.file("b.db")) == 0);
  CHECK(a.measurements().size() == 2);
  CHECK(a.stats().matrices == 1);
  CHECK(a.best("csr1-0123456789abcdef", "spmv", "f32", 1, "Test GPU")->candidate == "graph/fast");
}

TEST_CASE("bad database files are clear errors", "[db]") {
  testing::TempDir dir("sparsetune-db-test");
  const auto junk = dir.file("junk.db");
  std::ofstream(junk) << "this is not a database, just some text that is long enough to look odd";
  CHECK_THROWS_WITH(TuningDb(junk), Catch::Contains("junk.db"));
  TuningDb a(dir.file("a.db"));
  CHECK_THROWS_WITH(a.merge(dir.file("missing.db")), Catch::Contains("missing.db"));
  CHECK_THROWS_WITH(a.merge(junk), Catch::Contains("junk.db"));
  // A failed merge leaves the database usable.
  a.add(sample("graph/a", 1.0));
  CHECK(a.measurements().size() == 1);
}

TEST_CASE("default path follows XDG_DATA_HOME", "[db]") {
  const char* old = std::getenv("XDG_DATA_HOME");
  std::string saved = old ? old : "";
  ::setenv("XDG_DATA_HOME", "/tmp/xdg-test", 1);
  CHECK(TuningDb::default_path() == "/tmp/xdg-test/sparsetune/tuning.db");
  if (old)
    ::setenv("XDG_DATA_HOME", saved.c_str(), 1);
  else
    ::unsetenv("XDG_DATA_HOME");
}
