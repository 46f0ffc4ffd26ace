// Store-only formats: the Designer marks a format store-only exactly when every row of y is
// written once by one unit over all parts (no atomics); the interpreter then starts from NaN and
// assigns, so a wrong claim shows as NaN or a lost partial sum; the format binary keeps the flag
// and refuses a claim its arrays do not bear out.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>

#include "core/reference.hpp"
#include "graph/designer.hpp"
#include "graph/interpreter.hpp"
#include "graph_test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::graph;

namespace {

using Triples = std::vector<std::tuple<std::int64_t, std::int64_t, double>>;

Graph known(const std::string& name) {
  return read_graph((std::filesystem::path(SPARSETUNE_TEST_DATA_DIR).parent_path().parent_path() /
                     "configs" / "graphs" / (name + ".json"))
                        .string());
}

Graph parse(const char* ops) {
  return graph_from_json(nlohmann::json::parse(std::string(R"({"ops":)") + ops + "}"));
}

// 70 x 50, every row holds 1 to 5 entries (row 13 the longest): no empty row.
Triples full_rows() {
  Triples t;
  for (std::int64_t r = 0; r < 70; ++r) {
    const std::int64_t n = r == 13 ? 40 : 1 + r % 5;
    for (std::int64_t k = 0; k < n; ++k)
      t.emplace_back(r, (r * 7 + k * 11) % 50, 0.25 * static_cast<double>((r + 3 * k) % 9) - 1.125);
  }
  return t;
}

// The same with rows 5 and 69 emptied.
Triples with_empty_rows() {
  Triples t;
  for (const auto& e : full_rows())
    if (std::get<0>(e) != 5 && std::get<0>(e) != 69) t.push_back(e);
  return t;
}

constexpr const char* kFourRowsPerThread =
    R"([{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK","rows":4},{"op":"THREAD_BITMAP_RED"}])";

void require_matches_reference(const Format& f, const Csr64& a) {
  const auto x = test::test_x(a.cols);
  const auto y = interpret(f, x);
  for (double v : y) REQUIRE(std::isfinite(v));
  REQUIRE(relative_l2_error(y, spmv_reference(a, x)) <= 1e-12);
}

}  // namespace

TEST_CASE("row-per-unit formats without empty rows are store-only", "[graph][store]") {
  const Csr64 a = test::from_triples(70, 50, full_rows());
  for (const char* name :
       {"csr-scalar", "ell", "csr-vector", "sell-c-sigma", "sell-p", "row-grouped-csr"}) {
    INFO(name);
    for (const char* dtype : {"f64", "f32"}) {
      DesignOptions o;
      o.dtype = dtype;
      const Format f = design(known(name), a, o);
      REQUIRE(f.store_only);
      REQUIRE(writes_each_row_once(f));
      const auto x = test::test_x(a.cols);
      const auto y = interpret(f, x);
      for (double v : y) REQUIRE(std::isfinite(v));
      REQUIRE(relative_l2_error(y, spmv_reference(a, x)) <= (dtype[1] == '6' ? 1e-12 : 1e-5));
    }
  }
}

TEST_CASE("a row no unit writes makes a format adding", "[graph][store]") {
  const Csr64 a = test::from_triples(70, 50, with_empty_rows());
  // One unit per row: the units of the empty rows 5 and 69 hold no entries and store 0.
  for (const char* name : {"csr-scalar", "csr-vector", "ell", "row-grouped-csr"}) {
    INFO(name);
    const Format f = design(known(name), a);
    REQUIRE(count_writes(f, 0)[5] == 1);
    REQUIRE(f.store_only);
    require_matches_reference(f, a);  // NaN-started y: rows 5 and 69 were written
  }
  // Four rows per thread with a bitmap reduction: the row steps skip the empty rows, which no
  // unit writes.
  const Format f = design(parse(kFourRowsPerThread), a);
  const auto writes = count_writes(f, 0);
  REQUIRE(writes[5] == 0);
  REQUIRE(writes[69] == 0);
  REQUIRE(writes[6] == 1);
  REQUIRE_FALSE(f.store_only);
  REQUIRE_FALSE(writes_each_row_once(f));
  require_matches_reference(f, a);  // zero-started y: the empty rows come out 0
  // Without empty rows the same graph writes every row once.
  const Format full = design(parse(kFourRowsPerThread), test::from_triples(70, 50, full_rows()));
  REQUIRE(full.store_only);
  require_matches_reference(full, test::from_triples(70, 50, full_rows()));
}

TEST_CASE("atomics make a format adding", "[graph][store]") {
  const Csr64 a = test::from_triples(70, 50, full_rows());
  for (const char* name : {"segmented-coo", "csr5-like", "merge-path-like", "hyb"}) {
    INFO(name);
    const Format f = design(known(name), a);
    bool atomic = false;
    for (const auto& p : f.parts) atomic = atomic || p.atomic;
    REQUIRE(atomic);
    REQUIRE_FALSE(f.store_only);
    REQUIRE_FALSE(writes_each_row_once(f));
    require_matches_reference(f, a);
  }
}

TEST_CASE("parts that cover the rows between them are store-only", "[graph][store]") {
  const Csr64 a = test::from_triples(70, 50, full_rows());
  // Row bands, each with its own kernel: every row in exactly one part.
  const Format rows = design(parse(R"([{"op":"ROW_DIV","bounds":[20,45],"branches":[
      [{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}],
      [{"op":"COMPRESS"},{"op":"BMW_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"},{"op":"WARP_TOTAL_RED"}],
      [{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"BMT_PAD","to_max":true,"interleave":true},{"op":"THREAD_TOTAL_RED"}]]}])"),
                             a);
  REQUIRE(rows.parts.size() == 3);
  REQUIRE(rows.store_only);
  require_matches_reference(rows, a);

  // Column bands: both parts write the rows they share, so their results must add up.
  const Format cols = design(parse(R"([{"op":"COL_DIV","count":2,"branches":[
      [{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}],
      [{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}]]}])"),
                             a);
  REQUIRE_FALSE(cols.store_only);
  require_matches_reference(cols, a);
}

TEST_CASE("the interpreter catches a format that wrongly claims store-only", "[graph][store]") {
  const auto x = test::test_x(50);
  // A row left out stays NaN.
  const Csr64 gaps = test::from_triples(70, 50, with_empty_rows());
  Format f = design(parse(kFourRowsPerThread), gaps);
  REQUIRE_FALSE(f.store_only);
  f.store_only = true;
  const auto y = interpret(f, x);
  REQUIRE(std::isnan(y[5]));
  REQUIRE(std::isnan(y[69]));
  REQUIRE(std::isfinite(y[6]));

  // A row written by two parts keeps only the last part's share.
  const Csr64 a = test::from_triples(70, 50, full_rows());
  Format cols = design(parse(R"([{"op":"COL_DIV","count":2,"branches":[
      [{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}],
      [{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}]]}])"),
                       a);
  cols.store_only = true;
  REQUIRE(relative_l2_error(interpret(cols, x), spmv_reference(a, x)) > 1e-3);
}

TEST_CASE("the format binary keeps the store-only flag and checks it", "[graph][store]") {
  const Csr64 a = test::from_triples(70, 50, full_rows());
  const Format f = design(known("csr-vector"), a);
  REQUIRE(f.store_only);
  auto s = to_safetensors(f, "test");
  REQUIRE(s.metadata.at("store_only") == "true");
  REQUIRE(from_safetensors(s, "f.safetensors").store_only);

  // Written before the flag existed: adding.
  s.metadata.erase("store_only");
  REQUIRE_FALSE(from_safetensors(s, "f.safetensors").store_only);
  s.metadata["store_only"] = "yes";
  REQUIRE_THROWS_WITH(from_safetensors(s, "f.safetensors"),
                      Catch::Contains("f.safetensors") && Catch::Contains("store_only"));

  // A claim the arrays do not bear out: the empty rows are written by no unit.
  const Format gaps =
      design(parse(kFourRowsPerThread), test::from_triples(70, 50, with_empty_rows()));
  auto g = to_safetensors(gaps, "test");
  REQUIRE(g.metadata.at("store_only") == "false");
  REQUIRE_FALSE(from_safetensors(g, "g.safetensors").store_only);
  g.metadata["store_only"] = "true";
  REQUIRE_THROWS_WITH(from_safetensors(g, "g.safetensors"),
                      Catch::Contains("g.safetensors") && Catch::Contains("exactly once"));

  // ... nor one claiming more rows than its parts hold (refused before any row is counted).
  auto big = to_safetensors(f, "test");
  big.metadata["shape"] = "[1000000000000000, 50]";
  REQUIRE_THROWS_WITH(from_safetensors(big, "b.safetensors"), Catch::Contains("exactly once"));

  // ... nor one with atomics.
  auto c = to_safetensors(design(known("segmented-coo"), a), "test");
  c.metadata["store_only"] = "true";
  REQUIRE_THROWS_WITH(from_safetensors(c, "c.safetensors"), Catch::Contains("exactly once"));
}
