#pragma once
// A tuning database as one self-contained JSON document, and back: `db export` writes it (all of
// a database or a chosen part), and every command that reads a database (train, eval, report)
// also takes such a file, on any machine, without the matrices.
//   {"format": "sparsetune-db-export", "version": 1,
//    "matrices": [{fingerprint, name, rows, cols, nnz, features}],
//    "runs": [{...the runs table's fields}], "measurements": [{...}]}
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "db/tuning_db.hpp"

namespace sparsetune::db {

struct ExportFilter {
  std::vector<std::string> only;  // matrix names; empty: all
  std::string arch;               // "": all
  bool measured_only = false;     // leave out predictions ("cost-model" device) and failures
};

nlohmann::json measurement_json(const Measurement& m);
nlohmann::json export_json(const TuningDb& db, const ExportFilter& filter = {});

// Adds an export's rows to `db`; throws Error naming `source` and the entry at fault.
void import_json(TuningDb& db, const nlohmann::json& j, const std::string& source);

// Writes the filtered rows to `out`: a JSON export (.json, gzipped when .json.gz) or a SQLite
// tuning database (.db), replaced as a whole. Returns the counts written.
Stats export_to(const TuningDb& db, const std::string& out, const ExportFilter& filter = {});

// A database to read: a SQLite file as it is, or a JSON export (.json, .json.gz) loaded into
// memory.
std::unique_ptr<TuningDb> open_database(const std::string& path);

// Copies the rows of `other` (a SQLite tuning database, or a JSON export checked entry by entry)
// into `db`, keeping each row once; returns the measurements added.
std::int64_t merge_from(TuningDb& db, const std::string& other);

}  // namespace sparsetune::db
