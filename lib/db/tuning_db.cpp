#include "db/tuning_db.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string_view>
#include <thread>

#include "core/error.hpp"

namespace sparsetune::db {

namespace {

constexpr int kSchemaVersion = 1;
constexpr int kBusyTimeoutMs = 120000;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS matrices(
  fingerprint TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  rows INTEGER NOT NULL,
  cols INTEGER NOT NULL,
  nnz INTEGER NOT NULL,
  features TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS measurements(
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  fingerprint TEXT NOT NULL,
  op TEXT NOT NULL,
  dtype TEXT NOT NULL,
  n INTEGER NOT NULL,
  device TEXT NOT NULL,
  arch TEXT NOT NULL,
  tool_version TEXT NOT NULL,
  candidate TEXT NOT NULL,
  graph TEXT NOT NULL,
  params TEXT NOT NULL,
  time_us REAL NOT NULL,
  gflops REAL NOT NULL,
  gbps REAL NOT NULL,
  error REAL NOT NULL,
  ok INTEGER NOT NULL,
  failure TEXT NOT NULL,
  created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS measurements_lookup
  ON measurements(fingerprint, op, dtype, n, device, ok, time_us);
CREATE TABLE IF NOT EXISTS runs(
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  fingerprint TEXT NOT NULL,
  op TEXT NOT NULL,
  dtype TEXT NOT NULL,
  n INTEGER NOT NULL,
  device TEXT NOT NULL,
  arch TEXT NOT NULL,
  tool_version TEXT NOT NULL,
  family TEXT NOT NULL,
  winner TEXT NOT NULL,
  winner_us REAL NOT NULL,
  baseline TEXT NOT NULL,
  baseline_us REAL NOT NULL,
  peak_gbs REAL NOT NULL,
  search_s REAL NOT NULL,
  wall_s REAL NOT NULL,
  candidates INTEGER NOT NULL,
  structures INTEGER NOT NULL,
  failures INTEGER NOT NULL,
  from_database INTEGER NOT NULL,
  created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS runs_lookup ON runs(fingerprint, op, dtype, n, device);
)sql";

// The runs table came after schema version 1's first release; a database without it gets it
// when opened, and a merged file without it simply has no runs.
#define SPARSETUNE_RUN_FIELDS                                                                    \
  "fingerprint, op, dtype, n, device, arch, tool_version, family, winner, winner_us, baseline, " \
  "baseline_us, peak_gbs, search_s, wall_s, candidates, structures, failures, from_database, "   \
  "created_at"
constexpr const char* kRunColumns = "uid, " SPARSETUNE_RUN_FIELDS;
constexpr const char* kRunSelect = "SELECT id, " SPARSETUNE_RUN_FIELDS " FROM runs ";
#undef SPARSETUNE_RUN_FIELDS

constexpr const char* kMeasurementColumns =
    "uid, fingerprint, op, dtype, n, device, arch, tool_version, candidate, graph, params, "
    "time_us, gflops, gbps, error, ok, failure, created_at";

// A prepared statement that finalizes itself.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql, const std::string& path) : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s_, nullptr) != SQLITE_OK)
      throw Error(path + ": tuning database: " + sqlite3_errmsg(db));
  }
  ~Statement() { sqlite3_finalize(s_); }
  Statement& bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bind(int i, std::int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  Statement& bind(int i, double v) {
    sqlite3_bind_double(s_, i, v);
    return *this;
  }
  // Steps once; true while a row is available.
  bool step() {
    int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw Error(path_ + ": tuning database: " + sqlite3_errmsg(db_));
  }
  std::string text(int c) const {
    auto p = sqlite3_column_text(s_, c);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
  std::int64_t integer(int c) const { return sqlite3_column_int64(s_, c); }
  double real(int c) const { return sqlite3_column_double(s_, c); }
  // A stored row's fields, checked: SQLite converts a value of another storage type silently (a
  // text time reads as 0 µs), so a hand-edited or foreign row is refused by column instead.
  std::string text_field(int c) const {
    expect(c, sqlite3_column_type(s_, c) == SQLITE_TEXT, "text");
    return text(c);
  }
  std::int64_t integer_field(int c) const {
    expect(c, sqlite3_column_type(s_, c) == SQLITE_INTEGER, "an integer");
    return integer(c);
  }
  double real_field(int c) const {
    const int t = sqlite3_column_type(s_, c);
    expect(c, t == SQLITE_FLOAT || t == SQLITE_INTEGER, "a number");
    return real(c);
  }

 private:
  void expect(int c, bool holds, const char* what) const {
    if (holds) return;
    std::string held;
    switch (sqlite3_column_type(s_, c)) {
      case SQLITE_NULL:
        held = "NULL";
        break;
      case SQLITE_BLOB:
        held = "a blob";
        break;
      case SQLITE_TEXT: {
        std::string v = text(c);
        if (v.size() > 40) v = v.substr(0, 40) + "...";
        held = "the text '" + v + "'";
        break;
      }
      default:
        held = "the number " + text(c);
    }
    std::string row;
    const std::string_view first = sqlite3_column_name(s_, 0);
    if (c != 0 && (first == "id" || first == "uid")) row = "row " + text(0) + ", ";
    if (c != 0 && first == "fingerprint") row = "matrix " + text(0) + ", ";
    throw Error(path_ + ": tuning database: " + row + "column '" + sqlite3_column_name(s_, c) +
                "' holds " + held + " where " + what + " belongs");
  }

  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
  std::string path_;
};

void exec(sqlite3* db, const std::string& sql, const std::string& path) {
  char* msg = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg) != SQLITE_OK) {
    std::string m = msg ? msg : "unknown error";
    sqlite3_free(msg);
    throw Error(path + ": tuning database: " + m);
  }
}

// exec() that waits out another connection's lock: switching the journal mode and creating the
// schema can meet SQLITE_BUSY without the busy handler being asked (two processes opening one new
// database at once), so they are retried until the busy timeout.
void exec_waiting(sqlite3* db, const std::string& sql, const std::string& path) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (int attempt = 0;; ++attempt) {
    char* msg = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg);
    if (rc == SQLITE_OK) return;
    const std::string m = msg ? msg : sqlite3_errstr(rc);
    sqlite3_free(msg);
    const int primary = rc & 0xff;
    if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) ||
        std::chrono::steady_clock::now() > until)
      throw Error(path + ": tuning database: " + m);
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(50, 1 << std::min(attempt, 6))));
  }
}

std::string now_utc() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// FNV-1a, 64-bit: stable across platforms and builds, so uids agree between merged databases.
std::uint64_t fnv1a(const std::string& s, std::uint64_t h) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// Two differently seeded hashes (128 bits, hex) make accidental collisions negligible.
std::string hash128(const std::string& key) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx",
                static_cast<unsigned long long>(fnv1a(key, 0xcbf29ce484222325ull)),
                static_cast<unsigned long long>(fnv1a(key, 0x84222325cbf29ce4ull)));
  return buf;
}

// Identity of a row for de-duplication: everything but the time it was stored.
std::string uid_of(const Measurement& m) {
  std::string key = m.fingerprint + '\x1f' + m.op + '\x1f' + m.dtype + '\x1f' +
                    std::to_string(m.n) + '\x1f' + m.device + '\x1f' + m.arch + '\x1f' +
                    m.tool_version + '\x1f' + m.candidate + '\x1f' + m.graph + '\x1f' + m.params +
                    '\x1f' + std::to_string(m.time_us) + '\x1f' + std::to_string(m.error) + '\x1f' +
                    (m.ok ? "1" : "0") + '\x1f' + m.failure;
  return hash128(key);
}

std::string uid_of(const Run& r) {
  char num[512];
  std::snprintf(num, sizeof num, "%.17g %.17g %.17g %.17g %.17g %lld %lld %lld %d", r.winner_us,
                r.baseline_us, r.peak_gbs, r.search_s, r.wall_s,
                static_cast<long long>(r.candidates), static_cast<long long>(r.structures),
                static_cast<long long>(r.failures), r.from_database ? 1 : 0);
  const std::string key = "run\x1f" + r.fingerprint + '\x1f' + r.op + '\x1f' + r.dtype + '\x1f' +
                          std::to_string(r.n) + '\x1f' + r.device + '\x1f' + r.arch + '\x1f' +
                          r.tool_version + '\x1f' + r.family + '\x1f' + r.winner + '\x1f' +
                          r.baseline + '\x1f' + num + '\x1f' + r.created_at;
  return hash128(key);
}

Run read_run(const Statement& s) {
  Run r;
  r.fingerprint = s.text_field(1);
  r.op = s.text_field(2);
  r.dtype = s.text_field(3);
  r.n = s.integer_field(4);
  r.device = s.text_field(5);
  r.arch = s.text_field(6);
  r.tool_version = s.text_field(7);
  r.family = s.text_field(8);
  r.winner = s.text_field(9);
  r.winner_us = s.real_field(10);
  r.baseline = s.text_field(11);
  r.baseline_us = s.real_field(12);
  r.peak_gbs = s.real_field(13);
  r.search_s = s.real_field(14);
  r.wall_s = s.real_field(15);
  r.candidates = s.integer_field(16);
  r.structures = s.integer_field(17);
  r.failures = s.integer_field(18);
  r.from_database = s.integer_field(19) != 0;
  r.created_at = s.text_field(20);
  return r;
}

Measurement read_measurement(const Statement& s) {
  Measurement m;
  m.fingerprint = s.text_field(1);
  m.op = s.text_field(2);
  m.dtype = s.text_field(3);
  m.n = s.integer_field(4);
  m.device = s.text_field(5);
  m.arch = s.text_field(6);
  m.tool_version = s.text_field(7);
  m.candidate = s.text_field(8);
  m.graph = s.text_field(9);
  m.params = s.text_field(10);
  m.time_us = s.real_field(11);
  m.gflops = s.real_field(12);
  m.gbps = s.real_field(13);
  m.error = s.real_field(14);
  m.ok = s.integer_field(15) != 0;
  m.failure = s.text_field(16);
  return m;
}

// Throws unless `schema` holds this tool's 'meta' table, or (with `empty_ok`: a file about to
// get the schema) no table at all: another program's SQLite file is named, never written into.
void check_tuning_tables(sqlite3* db, const std::string& schema, const std::string& path,
                         bool empty_ok) {
  Statement t(db,
              "SELECT count(*), coalesce(sum(name = 'meta'), 0) FROM " + schema +
                  ".sqlite_master WHERE type = 'table'",
              path);
  const std::int64_t tables = t.step() ? t.integer(0) : 0;
  if (t.integer(1) > 0 || (empty_ok && tables == 0)) return;
  throw Error(path + ": a SQLite file, but not a sparsetune tuning database (" +
              std::to_string(tables) + " tables and no 'meta')");
}

void check_schema(sqlite3* db, const std::string& schema, const std::string& path) {
  check_tuning_tables(db, schema, path, false);
  Statement s(db, "SELECT value FROM " + schema + ".meta WHERE key = 'schema_version'", path);
  if (!s.step()) throw Error(path + ": not a sparsetune tuning database (no schema version)");
  if (std::atoi(s.text(0).c_str()) != kSchemaVersion)
    throw Error(path + ": tuning database schema version " + s.text(0) + ", this tool reads " +
                std::to_string(kSchemaVersion));
}

}  // namespace

TuningDb::TuningDb(const std::string& path) : path_(path) {
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "cannot open";
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error(path + ": cannot open the tuning database: " + msg);
  }
  // Writers wait for each other (several tune processes may share a database) rather than fail.
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  try {
    // Before anything is written: the schema below would add this tool's tables beside another
    // program's.
    check_tuning_tables(db_, "main", path_, true);
    // WAL: readers never block the writer, and a writer killed at any point (kill -9) leaves the
    // file consistent with every committed transaction; each measurement is its own transaction.
    // synchronous=FULL makes a commit durable once add() returns.
    exec_waiting(db_, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL", path_);
    exec_waiting(db_, kSchema, path_);
    exec_waiting(db_,
                 "INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', '" +
                     std::to_string(kSchemaVersion) + "')",
                 path_);
    check_schema(db_, "main", path_);
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

TuningDb::~TuningDb() { sqlite3_close(db_); }

std::string TuningDb::default_path() {
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x)
    return std::string(x) + "/sparsetune/tuning.db";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.local/share/sparsetune/tuning.db";
}

void TuningDb::put_matrix(const MatrixRow& m) {
  Statement s(db_,
              "INSERT INTO matrices(fingerprint, name, rows, cols, nnz, features) "
              "VALUES(?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(fingerprint) DO UPDATE SET "
              "name = excluded.name, features = excluded.features",
              path_);
  s.bind(1, m.fingerprint).bind(2, m.name).bind(3, m.rows).bind(4, m.cols).bind(5, m.nnz);
  s.bind(6, m.features.empty() ? std::string("{}") : m.features);
  s.step();
}

std::optional<MatrixRow> TuningDb::matrix(const std::string& fingerprint) const {
  Statement s(db_,
              "SELECT fingerprint, name, rows, cols, nnz, features FROM matrices "
              "WHERE fingerprint = ?1",
              path_);
  s.bind(1, fingerprint);
  if (!s.step()) return std::nullopt;
  return MatrixRow{s.text_field(0),    s.text_field(1),    s.integer_field(2),
                   s.integer_field(3), s.integer_field(4), s.text_field(5)};
}

void TuningDb::add(const Measurement& m) {
  Statement s(db_,
              std::string("INSERT OR IGNORE INTO measurements(") + kMeasurementColumns +
                  ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
                  "?16, ?17, ?18)",
              path_);
  s.bind(1, uid_of(m)).bind(2, m.fingerprint).bind(3, m.op).bind(4, m.dtype).bind(5, m.n);
  s.bind(6, m.device).bind(7, m.arch).bind(8, m.tool_version).bind(9, m.candidate);
  s.bind(10, m.graph).bind(11, m.params.empty() ? std::string("{}") : m.params);
  s.bind(12, m.time_us).bind(13, m.gflops).bind(14, m.gbps).bind(15, m.error);
  s.bind(16, std::int64_t{m.ok ? 1 : 0}).bind(17, m.failure).bind(18, now_utc());
  s.step();
}

std::optional<Measurement> TuningDb::best(const std::string& fingerprint, const std::string& op,
                                          const std::string& dtype, std::int64_t n,
                                          const std::string& device) const {
  Statement s(db_,
              std::string("SELECT ") + kMeasurementColumns +
                  " FROM measurements WHERE fingerprint = ?1 AND op = ?2 AND dtype = ?3 AND "
                  "n = ?4 AND device = ?5 AND ok = 1 AND candidate LIKE 'graph/%' "
                  "ORDER BY time_us ASC, id ASC LIMIT 1",
              path_);
  s.bind(1, fingerprint).bind(2, op).bind(3, dtype).bind(4, n).bind(5, device);
  if (!s.step()) return std::nullopt;
  return read_measurement(s);
}

std::vector<Measurement> TuningDb::measurements(const std::string& fingerprint) const {
  Statement s(db_,
              std::string("SELECT ") + kMeasurementColumns +
                  " FROM measurements WHERE ?1 = '' OR fingerprint = ?1 ORDER BY id",
              path_);
  s.bind(1, fingerprint);
  std::vector<Measurement> out;
  while (s.step()) out.push_back(read_measurement(s));
  return out;
}

void TuningDb::add_run(const Run& run) {
  Run r = run;
  if (r.created_at.empty()) r.created_at = now_utc();
  Statement s(db_,
              std::string("INSERT OR IGNORE INTO runs(") + kRunColumns +
                  ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
                  "?16, ?17, ?18, ?19, ?20, ?21)",
              path_);
  s.bind(1, uid_of(r)).bind(2, r.fingerprint).bind(3, r.op).bind(4, r.dtype).bind(5, r.n);
  s.bind(6, r.device).bind(7, r.arch).bind(8, r.tool_version).bind(9, r.family);
  s.bind(10, r.winner).bind(11, r.winner_us).bind(12, r.baseline).bind(13, r.baseline_us);
  s.bind(14, r.peak_gbs).bind(15, r.search_s).bind(16, r.wall_s).bind(17, r.candidates);
  s.bind(18, r.structures).bind(19, r.failures).bind(20, std::int64_t{r.from_database ? 1 : 0});
  s.bind(21, r.created_at);
  s.step();
}

std::vector<Run> TuningDb::runs(const std::string& fingerprint) const {
  Statement s(db_, std::string(kRunSelect) + "WHERE ?1 = '' OR fingerprint = ?1 ORDER BY id",
              path_);
  s.bind(1, fingerprint);
  std::vector<Run> out;
  while (s.step()) out.push_back(read_run(s));
  return out;
}

std::optional<Run> TuningDb::last_search(const std::string& fingerprint, const std::string& op,
                                         const std::string& dtype, std::int64_t n,
                                         const std::string& device) const {
  Statement s(db_,
              std::string(kRunSelect) +
                  "WHERE fingerprint = ?1 AND op = ?2 AND dtype = ?3 AND n = ?4 AND "
                  "device = ?5 AND from_database = 0 ORDER BY id DESC LIMIT 1",
              path_);
  s.bind(1, fingerprint).bind(2, op).bind(3, dtype).bind(4, n).bind(5, device);
  if (!s.step()) return std::nullopt;
  return read_run(s);
}

std::vector<MatrixRow> TuningDb::matrices() const {
  Statement s(db_,
              "SELECT fingerprint, name, rows, cols, nnz, features FROM matrices ORDER BY name",
              path_);
  std::vector<MatrixRow> out;
  while (s.step())
    out.push_back({s.text_field(0), s.text_field(1), s.integer_field(2), s.integer_field(3),
                   s.integer_field(4), s.text_field(5)});
  return out;
}

Stats TuningDb::stats() const {
  Stats st;
  {
    Statement s(db_,
                "SELECT (SELECT COUNT(*) FROM matrices), (SELECT COUNT(*) FROM measurements), "
                "(SELECT COUNT(*) FROM measurements WHERE ok = 0), (SELECT COUNT(*) FROM runs)",
                path_);
    s.step();
    st.matrices = s.integer(0);
    st.measurements = s.integer(1);
    st.failures = s.integer(2);
    st.runs = s.integer(3);
  }
  Statement d(db_, "SELECT device, COUNT(*) FROM measurements GROUP BY device ORDER BY device",
              path_);
  while (d.step()) st.per_device.emplace_back(d.text(0), d.integer(1));
  Statement o(db_, "SELECT op, COUNT(*) FROM measurements GROUP BY op ORDER BY op", path_);
  while (o.step()) st.per_op.emplace_back(o.text(0), o.integer(1));
  return st;
}

std::string TuningDb::integrity_check() const {
  Statement s(db_, "PRAGMA integrity_check", path_);
  std::string out;
  while (s.step()) out += (out.empty() ? "" : "; ") + s.text(0);
  return out;
}

std::int64_t TuningDb::merge(const std::string& other_path) {
  if (!std::filesystem::is_regular_file(other_path))
    throw Error(other_path + ": no such tuning database");
  // A truncated or damaged file is refused before anything is copied.
  const auto refuse = [&](const std::string& why) {
    return Error(other_path + ": not a complete SQLite tuning database (truncated or damaged: " +
                 why + "); nothing was merged");
  };
  try {
    Statement attach(db_, "ATTACH DATABASE ?1 AS other", other_path);
    attach.bind(1, other_path);
    attach.step();
  } catch (const Error&) {
    throw refuse(sqlite3_errmsg(db_));
  }
  std::int64_t added = 0;
  try {
    std::string check;
    try {
      Statement q(db_, "PRAGMA other.quick_check", other_path);
      check = q.step() ? q.text(0) : "no answer";
    } catch (const Error&) {
      check = sqlite3_errmsg(db_);
    }
    if (check != "ok") throw refuse(check);
    check_schema(db_, "other", other_path);
    exec(db_, "BEGIN", path_);
    exec(db_,
         "INSERT OR IGNORE INTO matrices SELECT fingerprint, name, rows, cols, nnz, features "
         "FROM other.matrices",
         path_);
    const auto before = sqlite3_total_changes64(db_);
    exec(db_,
         std::string("INSERT OR IGNORE INTO measurements(") + kMeasurementColumns + ") SELECT " +
             kMeasurementColumns + " FROM other.measurements ORDER BY id",
         path_);
    added = sqlite3_total_changes64(db_) - before;
    bool other_has_runs = false;
    {
      Statement t(db_, "SELECT 1 FROM other.sqlite_master WHERE type = 'table' AND name = 'runs'",
                  other_path);
      other_has_runs = t.step();
    }
    if (other_has_runs)
      exec(db_,
           std::string("INSERT OR IGNORE INTO runs(") + kRunColumns + ") SELECT " + kRunColumns +
               " FROM other.runs ORDER BY id",
           path_);
    exec(db_, "COMMIT", path_);
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_exec(db_, "DETACH DATABASE other", nullptr, nullptr, nullptr);
    throw;
  }
  exec(db_, "DETACH DATABASE other", path_);
  return added;
}

}  // namespace sparsetune::db
