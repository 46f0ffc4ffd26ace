// The tuning database: schema, cache lookups, de-duplication, merging, and bad files.
#include "db/tuning_db.hpp"

#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "db/db_export.hpp"
#include "io/file_bytes.hpp"
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

  // Another program's SQLite file is refused and left as it was, no tables added to it.
  const auto foreign = dir.file("foreign.sqlite");
  {
    sqlite3* f = nullptr;
    REQUIRE(sqlite3_open(foreign.c_str(), &f) == SQLITE_OK);
    REQUIRE(sqlite3_exec(f, "CREATE TABLE foo(x); INSERT INTO foo VALUES(1)", nullptr, nullptr,
                         nullptr) == SQLITE_OK);
    sqlite3_close(f);
  }
  const auto before = io::read_file(foreign);
  CHECK_THROWS_WITH(TuningDb(foreign), Catch::Contains("foreign.sqlite") &&
                                           Catch::Contains("not a sparsetune tuning database"));
  CHECK(io::read_file(foreign) == before);
  CHECK_THROWS_WITH(db::open_database(foreign),
                    Catch::Contains("not a sparsetune tuning database"));
  // A JSON export cut off says where it breaks.
  const auto cut = dir.file("cut.json");
  std::ofstream(cut) << R"({"format": "sparsetune-tuning-db", "matrices": [)";
  CHECK_THROWS_WITH(db::open_database(cut),
                    Catch::Contains("cut.json") && Catch::Contains("not valid JSON at byte"));
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

namespace {
sparsetune::db::Run sample_run(const std::string& family, bool from_database = false) {
  sparsetune::db::Run r;
  r.fingerprint = "csr1-0123456789abcdef";
  r.op = "spmv";
  r.dtype = "f32";
  r.device = "Test GPU";
  r.arch = "sm_90";
  r.tool_version = "0.1.0";
  r.family = family;
  r.winner = "graph/b";
  r.winner_us = 7.5;
  r.baseline = "cusparse/csr_alg1";
  r.baseline_us = 9.0;
  r.peak_gbs = 3000;
  r.search_s = 41.5;
  r.wall_s = 55.25;
  r.candidates = 120;
  r.structures = 11;
  r.failures = 3;
  r.from_database = from_database;
  return r;
}
}  // namespace

TEST_CASE("a cuSPARSE row is never the database's answer", "[db]") {
  testing::TempDir dir("sparsetune-db-test");
  TuningDb db(dir.file("tuning.db"));
  db.add(sample("cusparse/csr_alg1", 1.0));  // faster, but not an operator graph
  CHECK_FALSE(db.best("csr1-0123456789abcdef", "spmv", "f32", 1, "Test GPU"));
  db.add(sample("graph/a", 4.0));
  CHECK(db.best("csr1-0123456789abcdef", "spmv", "f32", 1, "Test GPU")->candidate == "graph/a");
}

TEST_CASE("runs are kept field by field; last_search skips answers from the database", "[db]") {
  testing::TempDir dir("sparsetune-db-test");
  const auto path = dir.file("tuning.db");
  {
    TuningDb db(path);
    CHECK_FALSE(db.last_search("csr1-0123456789abcdef", "spmv", "f32", 1, "Test GPU"));
    db.add_run(sample_run("HB"));
  }
  TuningDb db(path);
  db.add_run(sample_run("HB", /*from_database=*/true));
  const auto runs = db.runs();
  REQUIRE(runs.size() == 2);
  const auto& r = runs[0];
  CHECK(r.family == "HB");
  CHECK(r.winner == "graph/b");
  CHECK(r.winner_us == 7.5);
  CHECK(r.baseline == "cusparse/csr_alg1");
  CHECK(r.baseline_us == 9.0);
  CHECK(r.peak_gbs == 3000);
  CHECK(r.search_s == 41.5);
  CHECK(r.wall_s == 55.25);
  CHECK(r.candidates == 120);
  CHECK(r.structures == 11);
  CHECK(r.failures == 3);
  CHECK_FALSE(r.from_database);
  CHECK(r.created_at.size() == 20);  // 2026-11-24T01:02:03Z
  CHECK(runs[1].from_database);
  const auto last = db.last_search("csr1-0123456789abcdef", "spmv", "f32", 1, "Test GPU");
  REQUIRE(last);
  CHECK_FALSE(last->from_database);
  CHECK_FALSE(db.last_search("csr1-0123456789abcdef", "spmv", "f32", 1, "Other GPU"));
  CHECK(db.stats().runs == 2);
}

TEST_CASE("merge of two databases with overlapping rows keeps each row once", "[db]") {
  testing::TempDir dir("sparsetune-db-test");
  // Two task databases that measured one matrix in common, as two batch tasks given an
  // overlapping list would.
  {
    TuningDb a(dir.file("a.db"));
    a.put_matrix({"csr1-0123456789abcdef", "m", 3, 4, 5, "{}"});
    a.add(sample("graph/a", 12.0));
    a.add(sample("graph/shared", 5.0));
    a.add_run(sample_run("HB"));
  }
  {
    TuningDb b(dir.file("b.db"));
    b.put_matrix({"csr1-0123456789abcdef", "m", 3, 4, 5, "{}"});
    b.put_matrix({"csr1-fedcba9876543210", "n", 7, 7, 9, "{}"});
    b.add(sample("graph/shared", 5.0));
    Measurement other = sample("graph/z", 3.0);
    other.fingerprint = "csr1-fedcba9876543210";
    b.add(other);
    auto r = sample_run("SNAP");
    r.fingerprint = "csr1-fedcba9876543210";
    b.add_run(r);
  }
  TuningDb all(dir.file("all.db"));
  CHECK(all.merge(dir.file("a.db")) == 2);
  CHECK(all.merge(dir.file("b.db")) == 1);  // graph/shared was already there
  CHECK(all.merge(dir.file("a.db")) == 0);  // a second merge adds nothing
  CHECK(all.merge(dir.file("b.db")) == 0);
  const auto st = all.stats();
  CHECK(st.matrices == 2);
  CHECK(st.measurements == 3);
  CHECK(st.runs == 2);
  REQUIRE(all.matrices().size() == 2);
  CHECK(all.matrices()[0].name == "m");
  CHECK(all.runs("csr1-fedcba9876543210").at(0).family == "SNAP");
}

TEST_CASE("a JSON export merged twice, or into the database it came from, adds each row once",
          "[db]") {
  testing::TempDir dir("sparsetune-db-test");
  {
    TuningDb a(dir.file("a.db"));
    a.put_matrix({"csr1-0123456789abcdef", "m", 3, 4, 5, "{}"});
    a.add(sample("graph/a", 12.0));
    a.add(sample("graph/b", 5.0));
    a.add_run(sample_run("HB"));
  }
  {
    TuningDb a(dir.file("a.db"));
    db::export_to(a, dir.file("a.json.gz"));
  }
  // The export keeps each run's time, so it is the same run after a round trip.
  const auto back = db::open_database(dir.file("a.json.gz"));
  TuningDb a(dir.file("a.db"));
  REQUIRE(back->runs().size() == 1);
  CHECK(back->runs()[0].created_at == a.runs()[0].created_at);

  TuningDb all(dir.file("all.db"));
  CHECK(db::merge_from(all, dir.file("a.json.gz")) == 2);
  CHECK(db::merge_from(all, dir.file("a.json.gz")) == 0);
  CHECK(db::merge_from(all, dir.file("a.db")) == 0);
  CHECK(db::merge_from(a, dir.file("a.json.gz")) == 0);
  CHECK(all.stats().runs == 1);
  CHECK(all.stats().measurements == 2);
  CHECK(a.stats().runs == 1);

  // An export of an older version has no run times: its runs still come in once.
  auto j = nlohmann::json::parse(R"({"format": "sparsetune-db-export", "version": 1,
    "matrices": [], "measurements": [],
    "runs": [{"fingerprint": "csr1-0123456789abcdef", "op": "spmv", "dtype": "f32", "n": 1,
              "device": "Test GPU", "winner_us": 7.5, "baseline_us": 9.0, "peak_gbs": 3000,
              "search_s": 1, "wall_s": 2}]})");
  std::ofstream(dir.file("old.json")) << j.dump();
  TuningDb c(dir.file("c.db"));
  db::merge_from(c, dir.file("old.json"));
  db::merge_from(c, dir.file("old.json"));
  CHECK(c.stats().runs == 1);
  CHECK_THROWS_WITH(db::merge_from(c, dir.file("missing.json")), Catch::Contains("missing.json"));
}

TEST_CASE("a stored value of the wrong type is refused by column, never converted", "[db]") {
  testing::TempDir dir("sparsetune-db-test");
  const auto path = dir.file("tuning.db");
  { TuningDb(path).add(sample("graph/a", 4.0)); }
  const auto edit = [&](const char* sql) {
    sqlite3* f = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &f) == SQLITE_OK);
    REQUIRE(sqlite3_exec(f, sql, nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(f);
  };
  // Integer storage where REAL is declared stays a number: read as such.
  edit("UPDATE measurements SET time_us = 4");
  CHECK(TuningDb(path).measurements().at(0).time_us == 4.0);
  // Text would read as 0 µs, the fastest time there is.
  edit("UPDATE measurements SET time_us = 'fast'");
  CHECK_THROWS_WITH(TuningDb(path).measurements(),
                    Catch::Contains("tuning.db") && Catch::Contains("column 'time_us'") &&
                        Catch::Contains("the text 'fast' where a number belongs"));
  CHECK_THROWS_WITH(TuningDb(path).best("csr1-0123456789abcdef", "spmv", "f32", 1, "Test GPU"),
                    Catch::Contains("column 'time_us'"));
  edit("UPDATE measurements SET time_us = 4, n = 1.5");
  CHECK_THROWS_WITH(TuningDb(path).measurements(),
                    Catch::Contains("column 'n' holds the number 1.5 where an integer belongs"));
  edit("UPDATE measurements SET n = 1, op = x'00'");
  CHECK_THROWS_WITH(TuningDb(path).measurements(),
                    Catch::Contains("column 'op' holds a blob where text belongs"));
  edit("UPDATE measurements SET op = 'spmv'");
  CHECK(TuningDb(path).measurements().size() == 1);
  edit(
      "INSERT INTO matrices(fingerprint, name, rows, cols, nnz, features) "
      "VALUES('csr1-0123456789abcdef', 'm', 2, 2, 'many', '{}')");
  CHECK_THROWS_WITH(TuningDb(path).matrices(),
                    Catch::Contains("matrix csr1-0123456789abcdef, column 'nnz' holds the text "
                                    "'many' where an integer belongs"));
}
