#pragma once
// Baseline results (cuSPARSE, the COO SpTV) as rows of the tuning database, for `bench --db` and
// for the baselines `tune` measures beside its search; `sparsetune report` reads them back.
#include <string>
#include <vector>

#include "core/matrix.hpp"
#include "db/tuning_db.hpp"
#include "runtime/bench.hpp"

namespace sparsetune::search {

// One row per result that ran (unsupported and skipped ones are left out): candidate
// "cusparse/<name>", op, n and value type as measured, ok only when verified.
std::vector<db::Measurement> baseline_rows(const runtime::BenchReport& r,
                                           const std::string& fingerprint,
                                           const std::string& tool_version);

// `bench FILE --db PATH` for a matrix: the matrix (named, with its AlphaSparse features) and
// every baseline row, into `db` (opened before benching, so a bad path costs no measurement).
void record_bench(db::TuningDb& db, const std::string& name, const Csr64& a,
                  const runtime::BenchReport& r);

}  // namespace sparsetune::search
