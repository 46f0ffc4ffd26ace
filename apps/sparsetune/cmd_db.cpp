// `sparsetune db stats|export|merge`: look into and combine tuning databases.
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli.hpp"
#include "core/error.hpp"
#include "db/db_export.hpp"
#include "db/tuning_db.hpp"

namespace sparsetune::cli {

void add_db_command(CLI::App& app, const GlobalOptions& g) {
  auto* cmd = app.add_subcommand("db", "Inspect, export and merge tuning databases");
  cmd->require_subcommand(1);
  // Options outlive this function: CLI11 writes into them while parsing.
  struct Options {
    std::string path, fingerprint, export_db, out;
    std::vector<std::string> others;
    db::ExportFilter filter;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("--db", o->path, "Database file (default: $XDG_DATA_HOME/sparsetune/tuning.db)");
  auto path = [o] { return o->path.empty() ? db::TuningDb::default_path() : o->path; };

  cmd->add_subcommand("stats", "Counts of matrices, measurements and failures")
      ->callback([&g, path] {
        // Reading never creates: a mistyped --db is an error, not an empty database.
        const auto db = db::open_database(path());
        const auto& tdb = *db;
        const auto st = tdb.stats();
        nlohmann::json j = {{"path", tdb.path()},
                            {"matrices", st.matrices},
                            {"measurements", st.measurements},
                            {"failures", st.failures},
                            {"runs", st.runs},
                            {"per_device", nlohmann::json::object()},
                            {"per_op", nlohmann::json::object()}};
        for (const auto& [k, v] : st.per_device) j["per_device"][k] = v;
        for (const auto& [k, v] : st.per_op) j["per_op"][k] = v;
        if (g.json) return print_json(j);
        std::vector<std::vector<std::string>> rows = {
            {"database", tdb.path()},
            {"matrices", std::to_string(st.matrices)},
            {"measurements", std::to_string(st.measurements)},
            {"failures", std::to_string(st.failures)},
            {"runs (completed tunes)", std::to_string(st.runs)}};
        for (const auto& [k, v] : st.per_device) rows.push_back({"device " + k, std::to_string(v)});
        for (const auto& [k, v] : st.per_op) rows.push_back({"op " + k, std::to_string(v)});
        print_table(rows);
      });

  auto* exp = cmd->add_subcommand(
      "export",
      "Write a self-contained copy (-o FILE.json[.gz] or FILE.db; train and eval read it), or "
      "every measurement as JSON lines on stdout");
  exp->add_option("DB", o->export_db, "Database to export (default: --db)")
      ->check(CLI::ExistingFile);
  auto* out =
      exp->add_option("-o,--out", o->out, "Output: .json, .json.gz (one JSON document) or .db");
  exp->add_option("--fingerprint", o->fingerprint, "JSON lines: only this matrix")->excludes(out);
  exp->add_option("--only", o->filter.only, "Only these matrices (names)");
  exp->add_option("--arch", o->filter.arch, "Only rows of this architecture");
  exp->add_flag("--measured-only", o->filter.measured_only,
                "Leave out predictions and failures (what train reads)");
  exp->callback([&g, o, path] {
    // DB may itself be an export (a JSON one is read into memory).
    const auto tdb = db::open_database(o->export_db.empty() ? path() : o->export_db);
    if (o->out.empty()) {  // JSON lines, through the same filters as a file
      const auto j = db::export_json(*tdb, o->filter);
      for (const auto& m : j.at("measurements"))
        if (o->fingerprint.empty() || m.value("fingerprint", "") == o->fingerprint)
          std::printf("%s\n", m.dump().c_str());
      return;
    }
    const auto st = db::export_to(*tdb, o->out, o->filter);
    nlohmann::json j = {{"path", o->out},
                        {"matrices", st.matrices},
                        {"runs", st.runs},
                        {"measurements", st.measurements}};
    if (g.json) return print_json(j);
    std::printf("%s: %lld matrices, %lld runs, %lld measurements\n", o->out.c_str(),
                static_cast<long long>(st.matrices), static_cast<long long>(st.runs),
                static_cast<long long>(st.measurements));
  });

  auto* merge = cmd->add_subcommand(
      "merge", "Copy the rows of other databases (or JSON exports) into this one");
  merge->add_option("OTHER", o->others, "Databases to merge in")
      ->required()
      ->check(CLI::ExistingFile);
  merge->callback([&g, o, path] {
    const std::string into = path();
    const bool existed = std::filesystem::exists(into);
    nlohmann::json added = nlohmann::json::object();
    try {
      db::TuningDb tdb(into);
      for (const auto& other : o->others) added[other] = db::merge_from(tdb, other);
    } catch (const Error& e) {
      // A database this merge created is removed again; one that existed keeps what the
      // databases before the failing one added, and the error says so.
      if (!existed) {
        std::error_code ec;
        for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(into + suffix, ec);
        throw;
      }
      std::string kept;
      for (const auto& [other, n] : added.items())
        kept += (kept.empty() ? "" : ", ") + other + " (" + std::to_string(n.get<long long>()) +
                " new)";
      if (kept.empty()) throw;
      throw Error(std::string(e.what()) + "; " + into + " keeps what was merged before: " + kept);
    }
    if (g.json) return print_json({{"path", into}, {"added", added}});
    for (const auto& other : o->others)
      std::printf("%s: %lld new measurements from %s\n", into.c_str(),
                  static_cast<long long>(added[other].get<std::int64_t>()), other.c_str());
  });
}

}  // namespace sparsetune::cli
