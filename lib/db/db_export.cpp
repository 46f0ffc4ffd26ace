#include "db/db_export.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "core/error.hpp"
#include "io/file_bytes.hpp"

namespace sparsetune::db {

namespace {

using nlohmann::json;

constexpr const char* kFormat = "sparsetune-db-export";
constexpr int kVersion = 1;

json run_json(const Run& r) {
  return {{"fingerprint", r.fingerprint},
          {"op", r.op},
          {"dtype", r.dtype},
          {"n", r.n},
          {"device", r.device},
          {"arch", r.arch},
          {"tool_version", r.tool_version},
          {"family", r.family},
          {"winner", r.winner},
          {"winner_us", r.winner_us},
          {"baseline", r.baseline},
          {"baseline_us", r.baseline_us},
          {"peak_gbs", r.peak_gbs},
          {"search_s", r.search_s},
          {"wall_s", r.wall_s},
          {"candidates", r.candidates},
          {"structures", r.structures},
          {"failures", r.failures},
          {"from_database", r.from_database},
          {"created_at", r.created_at}};
}

// Typed field access that names the entry at fault.
class Entry {
 public:
  Entry(const json& j, std::string where) : j_(j), where_(std::move(where)) {
    if (!j.is_object()) throw Error(where_ + ": not an object");
  }
  std::string text(const char* k, bool required = true) const {
    const auto it = j_.find(k);
    if (it == j_.end() && !required) return "";
    if (it == j_.end() || !it->is_string()) throw Error(where_ + "." + k + ": not a string");
    return it->get<std::string>();
  }
  std::int64_t integer(const char* k, std::int64_t fallback) const {
    const auto it = j_.find(k);
    if (it == j_.end()) return fallback;
    if (!it->is_number_integer()) throw Error(where_ + "." + k + ": not an integer");
    return it->get<std::int64_t>();
  }
  double number(const char* k) const {
    const auto it = j_.find(k);
    if (it == j_.end()) return 0.0;
    if (!it->is_number()) throw Error(where_ + "." + k + ": not a number");
    return it->get<double>();
  }
  bool flag(const char* k, bool fallback) const {
    const auto it = j_.find(k);
    if (it == j_.end()) return fallback;
    if (!it->is_boolean()) throw Error(where_ + "." + k + ": not true or false");
    return it->get<bool>();
  }

 private:
  const json& j_;
  std::string where_;
};

const json& list(const json& j, const char* k, const std::string& source) {
  static const json empty = json::array();
  const auto it = j.find(k);
  if (it == j.end()) return empty;
  if (!it->is_array()) throw Error(source + ": '" + k + "' is not a list");
  return *it;
}

}  // namespace

json measurement_json(const Measurement& m) {
  return {{"fingerprint", m.fingerprint},
          {"op", m.op},
          {"dtype", m.dtype},
          {"n", m.n},
          {"device", m.device},
          {"arch", m.arch},
          {"tool_version", m.tool_version},
          {"candidate", m.candidate},
          {"graph", m.graph},
          {"params", m.params},
          {"time_us", m.time_us},
          {"gflops", m.gflops},
          {"gbps", m.gbps},
          {"error", m.error},
          {"ok", m.ok},
          {"failure", m.failure}};
}

json export_json(const TuningDb& db, const ExportFilter& f) {
  std::set<std::string> keep;  // fingerprints of the matrices exported
  json matrices = json::array();
  const auto all_matrices = db.matrices();
  // A filter that names what is not there is a mistake, not an empty export.
  for (const auto& name : f.only)
    if (std::none_of(all_matrices.begin(), all_matrices.end(),
                     [&](const MatrixRow& m) { return m.name == name; }))
      throw Error("--only: the database holds no matrix named '" + name + "'");
  for (const auto& m : all_matrices) {
    if (!f.only.empty() && std::find(f.only.begin(), f.only.end(), m.name) == f.only.end())
      continue;
    keep.insert(m.fingerprint);
    json features = json::parse(m.features, nullptr, false);
    matrices.push_back({{"fingerprint", m.fingerprint},
                        {"name", m.name},
                        {"rows", m.rows},
                        {"cols", m.cols},
                        {"nnz", m.nnz},
                        {"features", features.is_discarded() ? json::object() : features}});
  }
  const bool all = f.only.empty();
  std::set<std::string> archs;  // of every row, to name them when --arch matches none
  json runs = json::array();
  for (const auto& r : db.runs()) {
    archs.insert(r.arch);
    if ((all || keep.count(r.fingerprint)) && (f.arch.empty() || r.arch == f.arch))
      runs.push_back(run_json(r));
  }
  json rows = json::array();
  for (const auto& m : db.measurements()) {
    archs.insert(m.arch);
    if (!all && !keep.count(m.fingerprint)) continue;
    if (!f.arch.empty() && m.arch != f.arch) continue;
    if (f.measured_only && (!m.ok || m.device == "cost-model")) continue;
    rows.push_back(measurement_json(m));
  }
  if (!f.arch.empty() && !archs.count(f.arch)) {
    std::string held;
    for (const auto& a : archs) held += (held.empty() ? "" : ", ") + a;
    throw Error("--arch: the database holds no rows of " + f.arch + " (it holds " +
                (held.empty() ? std::string("none") : held) + ")");
  }
  return {{"format", kFormat},
          {"version", kVersion},
          {"matrices", matrices},
          {"runs", runs},
          {"measurements", rows}};
}

void import_json(TuningDb& db, const json& j, const std::string& source) {
  const auto format = j.is_object() ? j.find("format") : j.end();
  if (!j.is_object() || format == j.end() || *format != kFormat)
    throw Error(source + ": not a tuning-database export (\"format\": \"" + kFormat + "\")");
  const auto version = j.find("version");
  if (version == j.end() || !version->is_number_integer() || *version != kVersion)
    throw Error(source + ": export version " + j.value("version", json(nullptr)).dump() +
                ", this tool reads " + std::to_string(kVersion));
  const auto& matrices = list(j, "matrices", source);
  for (std::size_t i = 0; i < matrices.size(); ++i) {
    const Entry e(matrices[i], source + ": matrices[" + std::to_string(i) + "]");
    const auto& f = matrices[i].contains("features") ? matrices[i]["features"] : json::object();
    if (!f.is_object())
      throw Error(source + ": matrices[" + std::to_string(i) + "].features: not an object");
    db.put_matrix({e.text("fingerprint"), e.text("name"), e.integer("rows", 0),
                   e.integer("cols", 0), e.integer("nnz", 0), f.dump()});
  }
  const auto& runs = list(j, "runs", source);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Entry e(runs[i], source + ": runs[" + std::to_string(i) + "]");
    Run r;
    r.fingerprint = e.text("fingerprint");
    r.op = e.text("op");
    r.dtype = e.text("dtype");
    r.n = e.integer("n", 1);
    r.device = e.text("device");
    r.arch = e.text("arch", false);
    r.tool_version = e.text("tool_version", false);
    r.family = e.text("family", false);
    r.winner = e.text("winner", false);
    r.winner_us = e.number("winner_us");
    r.baseline = e.text("baseline", false);
    r.baseline_us = e.number("baseline_us");
    r.peak_gbs = e.number("peak_gbs");
    r.search_s = e.number("search_s");
    r.wall_s = e.number("wall_s");
    r.candidates = e.integer("candidates", 0);
    r.structures = e.integer("structures", 0);
    r.failures = e.integer("failures", 0);
    r.from_database = e.flag("from_database", false);
    // The time is part of a run's identity: kept, so that importing an export twice (or merging
    // it into a database that holds its rows) adds each run once. Exports written before it was
    // kept all read as one fixed time, for the same reason.
    r.created_at = e.text("created_at", false);
    if (r.created_at.empty()) r.created_at = "unknown";
    db.add_run(r);
  }
  const auto& rows = list(j, "measurements", source);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Entry e(rows[i], source + ": measurements[" + std::to_string(i) + "]");
    Measurement m;
    m.fingerprint = e.text("fingerprint");
    m.op = e.text("op");
    m.dtype = e.text("dtype");
    m.n = e.integer("n", 1);
    m.device = e.text("device");
    m.arch = e.text("arch", false);
    m.tool_version = e.text("tool_version", false);
    m.candidate = e.text("candidate");
    m.graph = e.text("graph", false);
    m.params = e.text("params", false);
    m.time_us = e.number("time_us");
    m.gflops = e.number("gflops");
    m.gbps = e.number("gbps");
    m.error = e.number("error");
    m.ok = e.flag("ok", true);
    m.failure = e.text("failure", false);
    db.add(m);
  }
}

Stats export_to(const TuningDb& db, const std::string& out, const ExportFilter& filter) {
  const json j = export_json(db, filter);
  Stats s;
  s.matrices = static_cast<std::int64_t>(j["matrices"].size());
  s.runs = static_cast<std::int64_t>(j["runs"].size());
  s.measurements = static_cast<std::int64_t>(j["measurements"].size());
  if (io::ends_with_nocase(out, ".json") || io::ends_with_nocase(out, ".json.gz")) {
    const std::string text = j.dump(1) + "\n";
    io::write_file_atomic(out, io::ends_with_nocase(out, ".gz") ? io::gzip(text, 9) : text);
    return s;
  }
  if (!io::ends_with_nocase(out, ".db"))
    throw Error(out + ": the export's name must end in .json, .json.gz or .db");
  // A database built beside the target and renamed over it: never half of one in its place.
  namespace fs = std::filesystem;
  const fs::path target(out);
  const fs::path tmp = target.parent_path() /
                       ("." + target.filename().string() + ".tmp-" + std::to_string(getpid()));
  try {
    fs::remove(tmp);
    {
      TuningDb copy(tmp.string());
      import_json(copy, j, out);
    }
    fs::rename(tmp, target);
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw;
  }
  return s;
}

namespace {

bool is_sqlite(const std::string& path) {
  std::string head(16, '\0');
  std::ifstream in(path, std::ios::binary);
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return head.rfind("SQLite format 3", 0) == 0;
}

}  // namespace

std::int64_t merge_from(TuningDb& db, const std::string& other) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(other, ec) || is_sqlite(other)) return db.merge(other);
  // An export goes through a SQLite copy of itself, so that the one merge (rows keyed by their
  // content's uid) decides what is already there.
  const auto src = open_database(other);
  const auto tmp = std::filesystem::temp_directory_path() /
                   ("sparsetune-merge-" + std::to_string(::getpid()) + ".db");
  struct Remove {
    std::filesystem::path p;
    ~Remove() {
      std::error_code e;
      std::filesystem::remove(p, e);
    }
  } remove{tmp};
  export_to(*src, tmp.string());
  return db.merge(tmp.string());
}

std::unique_ptr<TuningDb> open_database(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(path + ": no such tuning database or export");
  if (is_sqlite(path)) return std::make_unique<TuningDb>(path);
  const std::string text = io::read_file_decompressed(path);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    // A file that starts as JSON and breaks off (a truncated download) says where.
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && text[first] == '{')
      throw Error(path + ": a JSON export that is not valid JSON at byte " +
                  std::to_string(e.byte) + " of " + std::to_string(text.size()));
    throw Error(path + ": neither a SQLite tuning database nor a JSON export");
  }
  auto db = std::make_unique<TuningDb>(":memory:");
  import_json(*db, j, path);
  return db;
}

}  // namespace sparsetune::db
