// Graph JSON, parameter checks and dependency rules: every invalid graph names its operator,
// where it is, and the rule it breaks.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <set>

#include "graph/designer.hpp"
#include "graph/graph.hpp"
#include "graph/registry.hpp"
#include "graph_test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::graph;

namespace {

std::string graph_error(const std::string& text) {
  try {
    Graph g = graph_from_json(nlohmann::json::parse(text), "g.json");
    validate(g, "g.json");
  } catch (const GraphError& e) {
    return e.what();
  }
  return "";
}

std::string design_error(const std::string& text, const Csr64& a) {
  try {
    design(graph_from_json(nlohmann::json::parse(text)), a);
  } catch (const DesignError& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> known_graph_files() {
  std::vector<std::string> v;
  const auto dir = std::filesystem::path(SPARSETUNE_TEST_DATA_DIR).parent_path().parent_path() /
                   "configs" / "graphs";
  for (const auto& e : std::filesystem::directory_iterator(dir)) v.push_back(e.path().string());
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST_CASE("every operator of Table II and the extensions is registered once", "[graph]") {
  for (const char* name : {"ROW_DIV",
                           "COL_DIV",
                           "SORT",
                           "SORT_SUB",
                           "BIN",
                           "COMPRESS",
                           "BMTB_ROW_BLOCK",
                           "BMW_ROW_BLOCK",
                           "BMT_ROW_BLOCK",
                           "BMTB_COL_BLOCK",
                           "BMW_COL_BLOCK",
                           "BMT_COL_BLOCK",
                           "BMT_NNZ_BLOCK",
                           "BMTB_PAD",
                           "BMW_PAD",
                           "BMT_PAD",
                           "SORT_BMTB",
                           "SET_RESOURCES",
                           "GMEM_ATOM_RED",
                           "SHMEM_OFFSET_RED",
                           "SHMEM_TOTAL_RED",
                           "WARP_TOTAL_RED",
                           "WARP_BITMAP_RED",
                           "WARP_SEG_RED",
                           "THREAD_TOTAL_RED",
                           "THREAD_BITMAP_RED",
                           "HYB_SPLIT",
                           "DIAG_SPLIT",
                           "DENSE_SPLIT"}) {
    INFO(name);
    REQUIRE(find_operator(name) != nullptr);
  }
  std::set<std::string> names;
  for (const auto* op : operators()) REQUIRE(names.insert(op->name()).second);
}

TEST_CASE("known formats parse, validate and round-trip through JSON", "[graph]") {
  const auto files = known_graph_files();
  REQUIRE(files.size() >= 10);
  for (const auto& f : files) {
    INFO(f);
    Graph g = read_graph(f);
    REQUIRE_FALSE(g.name.empty());
    Graph back = graph_from_json(graph_to_json(g));
    validate(back);
    REQUIRE(graph_to_json(back) == graph_to_json(g));
    REQUIRE(describe(back) == describe(g));
  }
}

TEST_CASE("graph files are written whole", "[graph]") {
  const auto dir = std::filesystem::temp_directory_path() / "sparsetune_graph_write";
  std::filesystem::create_directories(dir);
  Graph g = read_graph(known_graph_files().front());
  write_graph((dir / "g.json").string(), g);
  REQUIRE(graph_to_json(read_graph((dir / "g.json").string())) == graph_to_json(g));
  REQUIRE_FALSE(std::filesystem::exists(dir / "g.json.tmp"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("invalid graphs are rejected naming the operator and the rule", "[graph]") {
  struct Case {
    const char* json;
    std::vector<const char*> expect;
  };
  const std::vector<Case> cases = {
      {R"({"ops":[{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"BMTB_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}]})",
       {"ops[2]", "BMTB_ROW_BLOCK", "coarser levels are cut first"}},
      {R"({"ops":[{"op":"BMT_ROW_BLOCK"},{"op":"COMPRESS"},{"op":"THREAD_TOTAL_RED"}]})",
       {"ops[0]", "BMT_ROW_BLOCK", "mapping operators follow COMPRESS"}},
      {R"({"ops":[{"op":"COMPRESS"},{"op":"SORT"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}]})",
       {"ops[1]", "SORT", "converting operators come before COMPRESS"}},
      {R"({"ops":[{"op":"COMPRESS"},{"op":"BMW_ROW_BLOCK"},{"op":"WARP_TOTAL_RED"}]})",
       {"ops[2]", "WARP_TOTAL_RED", "first reduction is a thread-level one"}},
      {R"({"ops":[{"op":"COMPRESS"},{"op":"BMW_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"},{"op":"SHMEM_TOTAL_RED"},{"op":"WARP_TOTAL_RED"}]})",
       {"ops[4]", "WARP_TOTAL_RED", "a warp reduction cannot follow a block one"}},
      {R"({"ops":[{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"},{"op":"THREAD_BITMAP_RED"}]})",
       {"ops[3]", "THREAD_BITMAP_RED", "cannot follow"}},
      {R"({"ops":[{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"},{"op":"BMT_PAD"}]})",
       {"ops[3]", "BMT_PAD", "mapping operators come before implementing operators"}},
      {R"({"ops":[{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"}]})",
       {"ops (end)", "thread-level reduction"}},
      {R"({"ops":[{"op":"BMT_ROW_BLOCK"}]})", {"BMT_ROW_BLOCK", "follow COMPRESS"}},
      {R"({"ops":[{"op":"COMPRESS"},{"op":"THREAD_TOTAL_RED"}]})",
       {"THREAD_TOTAL_RED", "follow the mapping"}},
      {R"({"ops":[{"op":"COMPRESS"},{"op":"COMPRESS"}]})", {"ops[1]", "COMPRESS appears once"}},
      {R"({"ops":[{"op":"ROW_DIV","count":3,"branches":[[],[]]}]})",
       {"ROW_DIV", "one branch per part, got 2"}},
      {R"({"ops":[{"op":"ROW_DIV","branches":[[],[]]},{"op":"COMPRESS"}]})",
       {"ROW_DIV", "ends its list"}},
      {R"({"ops":[{"op":"ROW_DIV","branches":[[{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}],[{"op":"COMPRESS"},{"op":"BMW_ROW_BLOCK"},{"op":"WARP_TOTAL_RED"}]]}]})",
       {"ops[0].branches[1][2]", "WARP_TOTAL_RED", "thread-level one"}},
      {R"({"ops":[{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK","branches":[[]]},{"op":"THREAD_TOTAL_RED"}]})",
       {"BMT_ROW_BLOCK", "only dividing operators have branches"}},
      {R"({"ops":[{"op":"FOO"}]})", {"ops[0]", "FOO", "unknown operator"}},
      {R"({"ops":[{"op":"COMPRESS","level":2}]})", {"COMPRESS", "unknown parameter 'level'"}},
      {R"({"ops":[{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK","rows":0},{"op":"THREAD_TOTAL_RED"}]})",
       {"BMT_ROW_BLOCK", "'rows' must be an integer in [1"}},
      {R"({"ops":[{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK","rows":"2"},{"op":"THREAD_TOTAL_RED"}]})",
       {"BMT_ROW_BLOCK", "'rows' must be an integer"}},
      {R"({"ops":[{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"SET_RESOURCES","threads":48},{"op":"THREAD_TOTAL_RED"}]})",
       {"SET_RESOURCES", "multiple of 32"}},
      {R"({"ops":[{"op":"COMPRESS"},{"op":"BMT_PAD"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}]})",
       {"BMT_PAD", "must be blocked before it is padded"}},
      {R"({"ops":[{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"BMT_PAD","interleave":true},{"op":"THREAD_TOTAL_RED"}]})",
       {"BMT_PAD", "interleave needs to_max"}},
      {R"({"ops":[{"op":"COMPRESS"},{"op":"BMTB_ROW_BLOCK"},{"op":"BMT_ROW_BLOCK"},{"op":"BMTB_PAD"},{"op":"THREAD_TOTAL_RED"}]})",
       {"BMTB_PAD", "before cutting finer levels"}},
      {R"({"ops":[{"op":"COMPRESS"},{"op":"BMT_NNZ_BLOCK","interleave":true},{"op":"BMT_PAD"},{"op":"THREAD_BITMAP_RED"}]})",
       {"BMT_PAD", "interleaved thread blocks cannot be padded"}},
      {R"({"ops":[{"op":"COMPRESS"},{"op":"BMTB_NNZ_BLOCK"},{"op":"SORT_BMTB"},{"op":"THREAD_TOTAL_RED"}]})",
       {"SORT_BMTB", "needs BMTB_ROW_BLOCK"}},
      {R"({"ops":[{"op":"COMPRESS"},{"op":"BMW_ROW_BLOCK"},{"op":"BMW_COL_BLOCK"},{"op":"THREAD_TOTAL_RED"}]})",
       {"BMW_COL_BLOCK", "BMW is already blocked"}},
      {R"({"ops":[{"op":"BIN","bounds":[8,4],"branches":[[],[],[]]}]})",
       {"BIN", "strictly increasing"}},
      {R"({"ops":[{"op":"DIAG_SPLIT","min_fill":1.5,"branches":[[],[]]}]})",
       {"DIAG_SPLIT", "'min_fill' must be a number"}},
      {R"({"ops":"COMPRESS"})", {"ops must be an array"}},
      {R"({"name":3,"ops":[]})", {"\"name\" must be a string"}},
      {R"({"op":"spgemm","ops":[]})", {"not supported"}},
  };
  for (const auto& c : cases) {
    INFO(c.json);
    const std::string e = graph_error(c.json);
    REQUIRE_FALSE(e.empty());
    for (const char* want : c.expect) {
      INFO(e);
      REQUIRE(e.find(want) != std::string::npos);
    }
  }
}

TEST_CASE("data rules name the operator and the rule", "[graph]") {
  const Csr64 a =
      test::from_triples(4, 4, {{0, 0, 1}, {0, 2, 2}, {2, 1, 3}, {2, 2, 4}, {2, 3, 5}, {3, 0, 6}});
  std::string e = design_error(
      R"({"ops":[{"op":"COMPRESS"},{"op":"BMT_NNZ_BLOCK","nnz":4},{"op":"THREAD_TOTAL_RED"},{"op":"GMEM_ATOM_RED"}]})",
      a);
  REQUIRE(e.find("THREAD_TOTAL_RED: rule: every BMT must hold one row") != std::string::npos);
  e = design_error(
      R"({"ops":[{"op":"COMPRESS"},{"op":"BMT_COL_BLOCK","cols":2},{"op":"THREAD_TOTAL_RED"}]})",
      a);
  REQUIRE(e.find("without GMEM_ATOM_RED every row is written once, but row 0 is written 2 times") !=
          std::string::npos);
  e = design_error(
      R"({"ops":[{"op":"COMPRESS"},{"op":"BMTB_ROW_BLOCK","rows":4},{"op":"THREAD_BITMAP_RED"},{"op":"SHMEM_OFFSET_RED","max_rows":2}]})",
      a);
  REQUIRE(e.find("SHMEM_OFFSET_RED: rule: a BMTB may span at most max_rows = 2 rows") !=
          std::string::npos);
  e = design_error(
      R"({"ops":[{"op":"COMPRESS"},{"op":"BMW_ROW_BLOCK","rows":2},{"op":"THREAD_TOTAL_RED"},{"op":"WARP_TOTAL_RED"}]})",
      a);
  REQUIRE(e.find("WARP_TOTAL_RED: rule: every BMW must hold one row") != std::string::npos);
  e = design_error(
      R"({"ops":[{"op":"COMPRESS"},{"op":"BMW_ROW_BLOCK","rows":2},{"op":"THREAD_BITMAP_RED"},{"op":"WARP_TOTAL_RED"}]})",
      a);
  REQUIRE(e.find("WARP_TOTAL_RED: rule: every BMW must hold one row") != std::string::npos);
}

TEST_CASE("padding that would exhaust memory is a named data rule", "[graph]") {
  // One row of 5000 entries among 2000 empty ones: ELL would store 10 million entries.
  std::vector<std::tuple<std::int64_t, std::int64_t, double>> t;
  for (std::int64_t c = 0; c < 5000; ++c) t.emplace_back(7, c, 1.0);
  const Csr64 a = test::from_triples(2000, 5000, t);
  const std::string ell =
      R"({"ops":[{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"BMT_PAD","to_max":true,"interleave":true},{"op":"THREAD_TOTAL_RED"}]})";
  const std::string e = design_error(ell, a);
  REQUIRE(e.find("BMT_PAD: rule: padding would store 10000000 entries") != std::string::npos);
  DesignOptions generous;
  generous.max_padding = 5000;
  REQUIRE(design(graph_from_json(nlohmann::json::parse(ell)), a, generous).parts[0].nnz_stored ==
          10000000);
}

TEST_CASE("ELL metadata matches a hand-built layout", "[graph]") {
  // Rows of lengths 2, 0, 3, 1; padded to 3 and stored column-major (entry k of row r at 4k + r).
  const Csr64 a =
      test::from_triples(4, 4, {{0, 0, 1}, {0, 2, 2}, {2, 1, 3}, {2, 2, 4}, {2, 3, 5}, {3, 0, 6}});
  Graph g = graph_from_json(nlohmann::json::parse(
      R"({"ops":[{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"BMT_PAD","to_max":true,"interleave":true},{"op":"THREAD_TOTAL_RED"}]})"));
  const Format f = design(g, a);
  REQUIRE(f.parts.size() == 1);
  const auto& p = f.parts[0];
  REQUIRE(p.nnz_stored == 12);
  REQUIRE(p.pad_entries == 6);
  REQUIRE(p.array(Arr::nz_col).ints ==
          std::vector<std::int64_t>{0, 0, 1, 0, 2, 0, 2, 0, 2, 0, 3, 0});
  REQUIRE(p.array(Arr::nz_val).reals == std::vector<double>{1, 0, 3, 6, 2, 0, 4, 0, 0, 0, 5, 0});
  REQUIRE(p.array(Arr::bmt_first_nz).ints == std::vector<std::int64_t>{0, 1, 2, 3});
  REQUIRE(p.array(Arr::bmt_stride).ints == std::vector<std::int64_t>{4, 4, 4, 4});
  REQUIRE(p.array(Arr::bmt_size).ints == std::vector<std::int64_t>{3, 3, 3, 3});
  REQUIRE(p.array(Arr::bmt_row).ints == std::vector<std::int64_t>{0, 1, 2, 3});
  REQUIRE(p.array(Arr::bmw_first_bmt).ints == std::vector<std::int64_t>{0, 4});
  REQUIRE(p.array(Arr::bmtb_first_bmw).ints == std::vector<std::int64_t>{0, 1});
  REQUIRE_FALSE(p.has(Arr::nz_row_delta));  // no fragment reads it
  REQUIRE_FALSE(p.atomic);
}

TEST_CASE("SORT, BIN and SORT_BMTB keep the row map consistent", "[graph]") {
  const Csr64 a =
      test::from_triples(5, 3, {{0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {1, 2, 1}, {3, 1, 2}, {3, 2, 2}});
  Graph g = graph_from_json(nlohmann::json::parse(
      R"({"ops":[{"op":"SORT"},{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}]})"));
  auto m = apply_graph((validate(g), g), a);
  REQUIRE(m.parts[0].origin_row == std::vector<std::int64_t>{1, 3, 0, 2, 4});
  g = graph_from_json(nlohmann::json::parse(
      R"({"ops":[{"op":"BIN","bounds":[1,3],"branches":[[{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}],[{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}],[{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}]]}]})"));
  validate(g);
  m = apply_graph(g, a);
  REQUIRE(m.parts.size() == 3);
  REQUIRE(m.parts[0].origin_row == std::vector<std::int64_t>{2, 4});
  REQUIRE(m.parts[1].origin_row == std::vector<std::int64_t>{0, 3});
  REQUIRE(m.parts[2].origin_row == std::vector<std::int64_t>{1});
  g = graph_from_json(nlohmann::json::parse(
      R"({"ops":[{"op":"COMPRESS"},{"op":"BMTB_ROW_BLOCK","rows":2},{"op":"SORT_BMTB"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}]})"));
  validate(g);
  m = apply_graph(g, a);
  REQUIRE(m.parts[0].origin_row == std::vector<std::int64_t>{1, 0, 3, 2, 4});
}

TEST_CASE("graph JSON beyond the reader's bounds is refused by name", "[graph]") {
  // 4096 operators pass the count (the rules then judge them); one more does not.
  std::string ops;
  for (int i = 0; i < 4097; ++i) ops += std::string(i ? "," : "") + R"({"op":"SORT"})";
  CHECK_THROWS_WITH(parse_graph(R"({"ops":[)" + ops + "]}", "many.json"),
                    Catch::Contains("many.json: ops: more than 4096 operators"));
  // Branches nested 9 levels deep (each level an HYB_SPLIT with one branch).
  std::string nested = "[]";
  for (int i = 0; i < 9; ++i) nested = R"([{"op":"HYB_SPLIT","branches":[)" + nested + "]}]";
  CHECK_THROWS_WITH(parse_graph(R"({"ops":)" + nested + "}", "deep.json"),
                    Catch::Contains("nest deeper than 8 levels"));
  // JSON nested 65 deep anywhere, even inside a parameter or a string-free value.
  CHECK_THROWS_WITH(parse_graph(R"({"ops":[{"op":"SORT","x":)" + std::string(62, '[') +
                                    std::string(62, ']') + "}]}",
                                "json.json"),
                    Catch::Contains("json.json: JSON nested deeper than 64 levels"));
  // Brackets inside strings do not count.
  CHECK_THROWS_WITH(
      parse_graph(R"({"name":")" + std::string(100, '[') + R"(","ops":[{"op":"NOPE"}]})",
                  "str.json"),
      !Catch::Contains("nested deeper"));
}

TEST_CASE("graph JSON with a number out of range is an error, not a crash", "[graph]") {
  // Found by fuzz_graph: nlohmann throws out_of_range (not parse_error) for 2e2222.
  CHECK_THROWS_WITH(
      parse_graph(R"({"format":"sparsetune-graph","opq":2222E2222,"ops":[]})", "n.json"),
      Catch::Contains("n.json") && Catch::Contains("not valid JSON"));
  CHECK_THROWS_AS(parse_graph(R"({"ops":[{"op":"SORT","window":1e400}]})", "w.json"), Error);
}

TEST_CASE("an integer parameter far outside int64 is refused (fuzz_graph finding)", "[graph]") {
  // Converting 6.7e50 to an integer was undefined behaviour before the range check.
  for (const char* v : {"6666666666666666666666666666666666666666666666666512", "1e24", "-3e30"}) {
    INFO(v);
    CHECK_THROWS_WITH(
        parse_graph(std::string(R"({"ops":[{"op":"SORT_SUB","window":)") + v +
                        R"(},{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}]})",
                    "w.json"),
        Catch::Contains("'window' must be an integer"));
  }
}
