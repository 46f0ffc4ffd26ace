// `sparsetune report`'s numbers, from a database built here with hand-chosen rows: the fastest
// correct graph against the fastest verified cuSPARSE algorithm, failures and cuSPARSE rows
// never chosen, runs giving family, search time and bandwidth, and CSV quoting.
#include "report/report.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "test_support.hpp"

using namespace sparsetune;

namespace {

const char* kGraph =
    R"({"format":"sparsetune-graph","version":1,"name":"csr-vector","op":"spmv","ops":[)"
    R"({"op":"COMPRESS"},{"op":"BMW_ROW_BLOCK","rows":1},{"op":"SET_RESOURCES","threads":128},)"
    R"({"op":"THREAD_TOTAL_RED"},{"op":"WARP_TOTAL_RED"}]})";

db::Measurement row(const std::string& fp, const std::string& candidate, double us, bool ok,
                    const std::string& params = "{}", double gbps = 0) {
  db::Measurement m;
  m.fingerprint = fp;
  m.op = "spmv";
  m.dtype = "f64";
  m.device = "Test GPU";
  m.arch = "sm_90";
  m.tool_version = "0.1.0";
  m.candidate = candidate;
  m.graph = candidate.rfind("graph/", 0) == 0 ? kGraph : "";
  m.params = params;
  m.time_us = us;
  m.gbps = gbps;
  m.ok = ok;
  if (!ok) m.failure = "wrong result";
  return m;
}

// Matrix "alpha, the first": three graphs (the fastest failed), three cuSPARSE rows (the fastest
// unverified), a completed search. Matrix "beta": one graph, nothing else.
void fill(const std::string& path) {
  db::TuningDb d(path);
  d.put_matrix({"fa", "alpha, the first", 10, 12, 100, R"({"alphasparse.row_nnz_var":2.5})"});
  d.put_matrix({"fb", "beta", 3, 3, 7, "{}"});
  d.add(row("fa", "graph/x", 10.0, true, R"({"origin":"seed:ell","predicted_us":12.0})", 400));
  d.add(
      row("fa", "graph/y", 8.0, true, R"({"origin":"grown","structure":"abcdef0123456789"})", 500));
  d.add(row("fa", "graph/z", 5.0, false));
  d.add(row("fa", "cusparse/csr_alg1", 12.0, true));
  d.add(row("fa", "cusparse/coo_alg2", 9.6, true));
  d.add(row("fa", "cusparse/bad", 1.0, false));
  d.add(row("fb", "graph/w", 4.0, true, R"({"origin":"baseline"})"));
  // A matrix only benched (bench --db): cuSPARSE rows, no graph.
  d.put_matrix({"fc", "gamma", 5, 5, 9, "{}"});
  d.add(row("fc", "cusparse/csr_alg1", 3.0, true));
  auto spmm = row("fb", "graph/w", 40.0, true, R"({"origin":"baseline"})");
  spmm.op = "spmm";
  spmm.n = 32;
  d.add(spmm);
  db::Run r;
  r.fingerprint = "fa";
  r.op = "spmv";
  r.dtype = "f64";
  r.device = "Test GPU";
  r.family = "HB";
  r.winner = "graph/y";
  r.winner_us = 8.0;
  r.peak_gbs = 2000;
  r.search_s = 30;
  r.wall_s = 40;
  r.candidates = 3;
  r.structures = 2;
  r.failures = 1;
  d.add_run(r);
  r.from_database = true;  // a later answer from the database: not the search
  r.search_s = 0;
  d.add_run(r);
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

TEST_CASE("report: per-matrix results from a hand-built database", "[report]") {
  testing::TempDir dir("sparsetune-report-test");
  fill(dir.file("tuning.db"));
  const db::TuningDb d(dir.file("tuning.db"));
  const auto data = report::collect(d);
  REQUIRE(data.matrices.size() == 4);
  const auto& c = data.matrices[2];  // by nnz: the two beta rows (7), gamma (9), alpha (100)
  CHECK(c.name == "gamma");
  CHECK_FALSE(c.tuned_us);
  CHECK(*c.cusparse_us == 3.0);
  CHECK_FALSE(c.speedup);
  // Sorted by nnz: beta (7) first, its SpMM row (told apart by n) beside it.
  const auto& b = data.matrices[0].op == "spmv" ? data.matrices[0] : data.matrices[1];
  const auto& b32 = data.matrices[0].op == "spmv" ? data.matrices[1] : data.matrices[0];
  const auto& a = data.matrices.back();
  CHECK(b32.op == "spmm n=32");
  CHECK(b32.tuned_us == 40.0);
  CHECK(b.name == "beta");
  CHECK(b.tuned_us == 4.0);
  CHECK_FALSE(b.cusparse_us);
  CHECK_FALSE(b.speedup);
  CHECK(b.structure == "csr-vector");
  CHECK(b.family.empty());
  CHECK(b.candidates == 1);  // no run: counted from the rows
  CHECK_FALSE(b.search_s);

  CHECK(a.name == "alpha, the first");
  CHECK(a.family == "HB");
  CHECK(a.tuned_us == 8.0);             // graph/z is faster but failed
  CHECK(a.cusparse_us == Approx(9.6));  // cusparse/bad is faster but failed
  CHECK(a.cusparse_alg == "coo_alg2");
  CHECK(*a.speedup == Approx(1.2));  // 9.6 / 8
  CHECK(a.structure == "grown:abcdef01");
  CHECK(a.winner.find("BMW_ROW_BLOCK") != std::string::npos);
  CHECK(*a.row_nnz_var == 2.5);
  CHECK(*a.bandwidth_fraction == Approx(0.25));  // 500 / 2000
  CHECK(*a.search_s == 30);                      // the search, not the later database answer
  CHECK(a.candidates == 3);
  CHECK(a.failures == 1);

  REQUIRE(data.predictions.size() == 1);
  CHECK(data.predictions[0].structure == "ell");
  CHECK(data.predictions[0].predicted_us == 12.0);
  CHECK(data.predictions[0].measured_us == 10.0);
  CHECK(data.summary["geomean_speedup"].get<double>() == Approx(1.2));
  CHECK(data.summary["matrices"] == 4);

  const auto csv = lines(report::matrices_csv(data));
  REQUIRE(csv.size() == 5);
  CHECK(csv[0].rfind("name,family,fingerprint,op,dtype,device,rows,cols,nnz,row_nnz_var,", 0) == 0);
  CHECK((csv[1].rfind("beta,,fb,spmv,f64,Test GPU,3,3,7,,4,,,,", 0) == 0 ||
         csv[2].rfind("beta,,fb,spmv,f64,Test GPU,3,3,7,,4,,,,", 0) == 0));
  CHECK(csv[4].rfind(
            "\"alpha, the first\",HB,fa,spmv,f64,Test GPU,10,12,100,2.5,8,9.6,coo_alg2,1.2,", 0) ==
        0);
  CHECK(csv[4].find(",grown:abcdef01,500,2000,0.25,30,40,3,2,1") != std::string::npos);
  const auto pred = lines(report::predictions_csv(data));
  REQUIRE(pred.size() == 2);
  CHECK(pred[1] == "\"alpha, the first\",HB,ell,12,10");
}

TEST_CASE("report: an empty database gives headers only; a missing one is named", "[report]") {
  testing::TempDir dir("sparsetune-report-test");
  { db::TuningDb d(dir.file("empty.db")); }
  const db::TuningDb d(dir.file("empty.db"));
  const auto data = report::collect(d);
  CHECK(data.matrices.empty());
  CHECK(data.summary["geomean_speedup"].is_null());
  CHECK(lines(report::matrices_csv(data)).size() == 1);
  report::ReportOptions o;
  o.database = dir.file("missing.db");
  o.out_dir = dir.file("out");
  o.plots = false;
  CHECK_THROWS_WITH(report::write_report(o), Catch::Contains("missing.db"));
  CHECK_FALSE(std::filesystem::exists(dir.file("out")));
}

TEST_CASE("report: --no-plots writes the CSV files and summary into a fresh folder", "[report]") {
  testing::TempDir dir("sparsetune-report-test");
  fill(dir.file("tuning.db"));
  report::ReportOptions o;
  o.database = dir.file("tuning.db");
  o.out_dir = dir.file("out");
  o.plots = false;
  const auto r = report::write_report(o);
  CHECK(r.files.size() == 3);
  std::ifstream in(dir.file("out/matrices.csv"));
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(lines(ss.str()).size() == 5);
  CHECK(std::filesystem::exists(dir.file("out/summary.json")));
}

TEST_CASE("report: a renderer that fails leaves the previous report whole", "[report]") {
  testing::TempDir dir("sparsetune-report-test");
  fill(dir.file("tuning.db"));
  std::filesystem::create_directories(dir.file("out"));
  std::ofstream(dir.file("out/index.html")) << "previous";
  report::ReportOptions o;
  o.database = dir.file("tuning.db");
  o.out_dir = dir.file("out");
  o.python = "/bin/false";  // exits 1 at once
  CHECK_THROWS_WITH(report::write_report(o), Catch::Contains("nothing was written"));
  std::ifstream in(dir.file("out/index.html"));
  std::string text;
  std::getline(in, text);
  CHECK(text == "previous");
  CHECK_FALSE(std::filesystem::exists(dir.file("out/matrices.csv")));
  o.python = dir.file("no-such-python");
  CHECK_THROWS_WITH(report::write_report(o), Catch::Contains("no-such-python"));
}
