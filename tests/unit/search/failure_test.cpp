// Failed candidates reach the report and the database with their category; candidates bound to
// fail are pruned before any design (and really do fail when designed).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "core/convert.hpp"
#include "db/tuning_db.hpp"
#include "graph/designer.hpp"
#include "graph/operator.hpp"
#include "io/matrix_file.hpp"
#include "search/engine.hpp"
#include "search/precheck.hpp"
#include "search/tune.hpp"
#include "search_test_util.hpp"
#include "test_support.hpp"

using namespace sparsetune;
using namespace sparsetune::search;
namespace fs = std::filesystem;

namespace {

// 2000 rows of one entry and one row of 3000: an ELL of it pads every row to 3000 entries, far
// beyond the Designer's padding budget. The long row stays under kThreadRowLimit.
Csr64 one_long_row() {
  Coo64 c;
  c.rows = 2000;
  c.cols = 4000;
  for (std::int64_t r = 0; r < c.rows; ++r) {
    const std::int64_t len = r == 7 ? 3000 : 1;
    for (std::int64_t k = 0; k < len; ++k) {
      c.row.push_back(r);
      c.col.push_back((r + k * 13) % c.cols);
      c.val.push_back(1.0 + static_cast<double>(k % 5));
    }
  }
  std::int64_t dup = 0;
  return coo_to_csr<std::int64_t, std::int64_t>(c, &dup);
}

graph::Graph graph_of(const std::string& json) {
  return graph::graph_from_json(nlohmann::json::parse(json), "test graph");
}

}  // namespace

TEST_CASE("failure categories reach the report and the database", "[search]") {
  testing::TempDir t("sparsetune-failure-test");
  // Seeds: CSR-vector, ELL (the Designer refuses its padding), segmented COO (a compile error is
  // planted in its kernel); pruning rules that allow padding on this irregular matrix.
  fs::create_directories(t.path / "graphs");
  fs::create_directories(t.path / "config");
  for (const char* g : {"csr-vector.json", "ell.json", "segmented-coo.json"})
    fs::copy_file(fs::path(default_graphs_dir()) / g, t.path / "graphs" / g);
  fs::copy_file(fs::path(default_search_config_dir()) / "space.json",
                t.path / "config" / "space.json");
  std::ofstream(t.path / "config" / "pruning.json")
      << R"({"format": "sparsetune-pruning", "version": 1, "ban": [], "rules": []})";
  const auto matrix = t.file("long.mtx");
  io::write_matrix(matrix, one_long_row());

  TuneOptions o;
  o.matrix = matrix;
  o.out_dir = t.file("out");
  o.db_path = t.file("tuning.db");
  o.budget_s = 0;
  o.max_candidates = 3;  // the baseline and the two other seeds
  o.use_gpu = false;
  o.compile_only = true;  // design and compile each candidate as a GPU run would
  o.learned = false;      // these three seeds only (a shipped crux model adds its own)
  o.graphs_dir = (t.path / "graphs").string();
  o.config_dir = (t.path / "config").string();
  o.edit_source = [](const graph::Graph& g, std::string& source) {
    if (g.name == "segmented-coo") source += "\n#error planted compile error\n";
  };
  const auto r = tune(o);
  const auto& f = r.report["search"]["failures"];
  CHECK(r.report["search"]["candidates"] == 3);
  CHECK(f["total"] == 2);
  CHECK(f["by_category"][failure::kDesignRefused] == 1);
  CHECK(f["by_category"][failure::kCompile] == 1);
  REQUIRE(f["first"].size() == 2);
  bool planted = false;
  for (const auto& m : f["first"])
    planted = planted || m["message"].get<std::string>().find("planted") != std::string::npos;
  CHECK(planted);
  // The winner is the baseline, which designs and compiles.
  CHECK(r.report["graph_line"].get<std::string>().find("BMW_ROW_BLOCK") != std::string::npos);
  // The database's failure column: "category: message".
  int refused = 0, compile = 0;
  for (const auto& m : db::TuningDb(o.db_path).measurements()) {
    if (m.ok) continue;
    refused += m.failure.rfind("design-refused: ", 0) == 0;
    compile += m.failure.rfind("compile: ", 0) == 0;
  }
  CHECK(refused == 1);
  CHECK(compile == 1);
}

TEST_CASE("candidates bound to fail are pruned, and do fail when designed", "[search]") {
  const auto tri = search_test::tridiagonal(3000);
  const auto shape = MatrixShape::of(tri);
  CHECK(shape.max_row == 3);
  CHECK(shape.row_len_gcd == 1);  // rows of 2 (first, last) and 3 entries
  const char* two_rows = R"({"name": "t", "op": "spmv", "ops": [{"op": "COMPRESS"},
      {"op": "BMT_ROW_BLOCK", "rows": 2}, {"op": "THREAD_TOTAL_RED"}]})";
  const char* one_row = R"({"name": "t", "op": "spmv", "ops": [{"op": "COMPRESS"},
      {"op": "BMT_ROW_BLOCK", "rows": 1}, {"op": "THREAD_TOTAL_RED"}]})";
  // Threads of two rows under warps of one row hold one row each: not pruned.
  const char* nested = R"({"name": "t", "op": "spmv", "ops": [{"op": "COMPRESS"},
      {"op": "BMW_ROW_BLOCK", "rows": 1}, {"op": "BMT_ROW_BLOCK", "rows": 2},
      {"op": "THREAD_TOTAL_RED"}, {"op": "WARP_TOTAL_RED"}]})";
  // Two-entry chunks of 4-row warps: rows of 3 entries make some chunk straddle two rows.
  const char* chunks = R"({"name": "t", "op": "spmv", "ops": [{"op": "COMPRESS"},
      {"op": "BMW_ROW_BLOCK", "rows": 4}, {"op": "BMT_NNZ_BLOCK", "nnz": 2},
      {"op": "THREAD_TOTAL_RED"}, {"op": "WARP_BITMAP_RED"}]})";
  const auto why = bound_to_fail(graph_of(two_rows), shape);
  CHECK(why.find("THREAD_TOTAL_RED needs one row per BMT") != std::string::npos);
  CHECK_THROWS_AS(graph::design(graph_of(two_rows), tri), graph::DesignError);
  CHECK(bound_to_fail(graph_of(one_row), shape).empty());
  CHECK(bound_to_fail(graph_of(nested), shape).empty());
  CHECK_NOTHROW(graph::design(graph_of(nested), tri));
  CHECK_FALSE(bound_to_fail(graph_of(chunks), shape).empty());
  CHECK_THROWS_AS(graph::design(graph_of(chunks), tri), graph::DesignError);

  // A row longer than kThreadRowLimit: thread-per-row graphs are pruned, CSR-vector never.
  const auto irr = search_test::irregular(2000);  // rows of 300 at most
  auto shape2 = MatrixShape::of(irr);
  CHECK(bound_to_fail(graph_of(one_row), shape2).empty());
  shape2.max_row = kThreadRowLimit + 1;
  CHECK(bound_to_fail(graph_of(one_row), shape2).find("longest row") != std::string::npos);
  const auto vector = graph::read_graph(default_graphs_dir() + "/csr-vector.json");
  CHECK(bound_to_fail(vector, shape2).empty());

  // Every shipped seed the rules prune on these matrices is refused by the Designer too.
  for (const auto* a : {&tri, &irr})
    for (const auto& g : load_graphs(default_graphs_dir()))
      if (!bound_to_fail(g, MatrixShape::of(*a)).empty())
        CHECK_THROWS_AS(graph::design(g, *a), graph::DesignError);
}
