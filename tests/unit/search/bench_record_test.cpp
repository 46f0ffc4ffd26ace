// Baseline results as tuning-database rows (bench --db, and the baselines beside a search).
#include "search/bench_record.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/fingerprint.hpp"
#include "search_test_util.hpp"
#include "test_support.hpp"

using namespace sparsetune;

namespace {
runtime::BaselineResult result(const std::string& name, const std::string& status, bool verified,
                               double median_ms) {
  runtime::BaselineResult b;
  b.name = name;
  b.n = 32;
  b.dtype = "f32";
  b.status = status;
  b.verified = verified;
  b.error = verified ? 1e-7 : 0.5;
  b.time_ms.median = median_ms;
  b.gflops = 2.0;
  b.note = status == "ok" ? "" : "illegal address";
  return b;
}
}  // namespace

TEST_CASE("bench results become rows: verified ones ok, failures kept, unsupported left out",
          "[search][bench]") {
  runtime::BenchReport r;
  r.op = "spmm";
  r.device.name = "Test GPU";
  r.device.arch = "sm_90";
  r.results = {result("csr_alg1", "ok", true, 0.010), result("coo_alg4", "failed", false, 0.002),
               result("bsr", "unsupported", false, 0)};
  const auto rows = search::baseline_rows(r, "csr1-x", "9.9.9");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].candidate == "cusparse/csr_alg1");
  CHECK(rows[0].op == "spmm");
  CHECK(rows[0].n == 32);
  CHECK(rows[0].dtype == "f32");
  CHECK(rows[0].device == "Test GPU");
  CHECK(rows[0].time_us == Approx(10.0));  // 0.010 ms
  CHECK(rows[0].ok);
  CHECK_FALSE(rows[1].ok);
  CHECK(rows[1].failure == "failed: illegal address");
  CHECK(rows[1].tool_version == "9.9.9");

  testing::TempDir dir("sparsetune-bench-record");
  const Csr64 a = search_test::tridiagonal(50);
  {
    db::TuningDb w(dir.file("t.db"));
    search::record_bench(w, "tri", a, r);
  }
  const db::TuningDb db(dir.file("t.db"));
  const auto m = db.matrix(fingerprint(a));
  REQUIRE(m);
  CHECK(m->name == "tri");
  CHECK(m->nnz == a.nnz());
  CHECK(nlohmann::json::parse(m->features).contains("alphasparse.row_nnz_var"));
  CHECK(db.measurements().size() == 2);
}
