#include "search/bench_record.hpp"

#include <nlohmann/json.hpp>

#include "core/fingerprint.hpp"
#include "core/version.hpp"
#include "features/matrix_features.hpp"

namespace sparsetune::search {

std::vector<db::Measurement> baseline_rows(const runtime::BenchReport& r,
                                           const std::string& fingerprint,
                                           const std::string& tool_version) {
  std::vector<db::Measurement> out;
  for (const auto& b : r.results) {
    if (b.status == "unsupported" || b.status == "skipped") continue;
    db::Measurement m;
    m.fingerprint = fingerprint;
    m.op = r.op;
    m.dtype = b.dtype;
    m.n = b.n;
    m.device = r.device.name;
    m.arch = r.device.arch;
    m.tool_version = tool_version;
    m.candidate = "cusparse/" + b.name;
    m.params = nlohmann::json({{"verified", b.verified}, {"note", b.note}}).dump();
    m.time_us = b.time_ms.median * 1000;
    m.gflops = b.gflops;
    m.gbps = b.gbs;
    m.error = b.error;
    m.ok = b.status == "ok" && b.verified;
    m.failure = m.ok ? std::string() : b.status + (b.note.empty() ? "" : ": " + b.note);
    out.push_back(std::move(m));
  }
  return out;
}

void record_bench(db::TuningDb& db, const std::string& name, const Csr64& a,
                  const runtime::BenchReport& r) {
  const std::string fp = fingerprint(a);
  const auto f = features::feature_row(features::alphasparse_features(a));
  db.put_matrix({fp, name, a.rows, a.cols, a.nnz(), f.dump()});
  for (const auto& m : baseline_rows(r, fp, kVersion)) db.add(m);
}

}  // namespace sparsetune::search
