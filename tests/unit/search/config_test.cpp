#include "search/config.hpp"

#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "features/matrix_features.hpp"
#include "search/annealing.hpp"
#include "search/space.hpp"
#include "search_test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::search;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("shipped search space and pruning rules load", "[search]") {
  const auto space = load_search_space(default_search_config_dir() + "/space.json");
  const auto pruning = load_pruning(default_search_config_dir() + "/pruning.json");
  CHECK(space.axes.size() >= 10);
  const auto* rows = space.axis("BMTB_ROW_BLOCK", "rows");
  REQUIRE(rows);
  CHECK(std::is_sorted(rows->coarse.begin(), rows->coarse.end()));
  CHECK(space.axis("ROW_DIV", "bounds")->strategy == Discretization::DivInRowLenMutation);
  CHECK(!pruning.ban.empty());
  CHECK(!pruning.rules.empty());
}

TEST_CASE("bad search configurations are refused with the entry named", "[search]") {
  const std::string head = R"({"format":"sparsetune-search-space","version":1,"params":[)";
  auto space = [&](const std::string& entry) {
    return error_of([&] { parse_search_space(head + entry + "]}", "space.json"); });
  };
  CHECK(space(R"({"op":"NO_SUCH_OP","param":"rows","coarse":[1],"fine":[1]})")
            .find("params[0]: no operator named 'NO_SUCH_OP'") != std::string::npos);
  CHECK(space(R"({"op":"BMT_ROW_BLOCK","param":"width","coarse":[1],"fine":[1]})")
            .find("has no parameter 'width'") != std::string::npos);
  CHECK(space(R"({"op":"BMT_ROW_BLOCK","param":"rows","coarse":[0],"fine":[1]})")
            .find("outside the operator's range") != std::string::npos);
  CHECK(
      space(R"({"op":"BMT_ROW_BLOCK","param":"rows","coarse":[],"fine":[1]})").find("empty grid") !=
      std::string::npos);
  CHECK(space(R"({"op":"ROW_DIV","param":"bounds","coarse":[2],"fine":[2]})")
            .find("needs a discretization strategy") != std::string::npos);
  CHECK(space(R"({"op":"BMT_ROW_BLOCK","param":"rows","coarse":[1]})").find("missing \"fine\"") !=
        std::string::npos);
  CHECK(error_of([] { parse_search_space("{", "s.json"); }).find("s.json: not valid JSON") == 0);
  CHECK(error_of([] { parse_search_space(R"({"format":"x"})", "s.json"); }).find("expected") !=
        std::string::npos);

  const std::string ph = R"({"format":"sparsetune-pruning","version":1,)";
  CHECK(error_of([&] {
          parse_pruning(ph + R"("ban":["NOPE"]})", "p.json");
        }).find("p.json: ban[0]: no operator named 'NOPE'") == 0);
  CHECK(error_of([&] {
          parse_pruning(ph + R"("rules":[{"name":"r","ban":["BIN"],
              "when":[{"feature":"row_len_max","below":3}]}]})",
                        "p.json");
        }).find("rules[0].when[0]: no feature named 'row_len_max'") != std::string::npos);
  CHECK(error_of([&] {
          parse_pruning(ph + R"("rules":[{"name":"r","ban":["BIN"],
              "when":[{"feature":"rows","below":3,"at_least":1}]}]})",
                        "p.json");
        }).find("exactly one of") != std::string::npos);
}

TEST_CASE("pruning rules follow the matrix's features", "[search]") {
  const auto pruning = parse_pruning(R"({"format":"sparsetune-pruning","version":1,
      "ban":["DENSE_SPLIT"],
      "rules":[{"name":"short","when":[{"feature":"row_nnz_max","below":32}],"ban":["WARP_TOTAL_RED"]},
               {"name":"big","when":[{"feature":"rows","at_least":1000000}],"ban":["BIN"]},
               {"name":"after","after":["BMW_ROW_BLOCK"],"ban":["GMEM_ATOM_RED"]}]})",
                                     "p.json");
  const auto f = features::alphasparse_features(search_test::tridiagonal(100));
  const auto s = prune_for(pruning, f);
  CHECK(s.applied == std::vector<std::string>{"short", "after"});
  CHECK(!s.allows("DENSE_SPLIT", {}));
  CHECK(!s.allows("WARP_TOTAL_RED", {}));
  CHECK(s.allows("BIN", {}));
  CHECK(s.allows("GMEM_ATOM_RED", {"COMPRESS"}));
  CHECK(!s.allows("GMEM_ATOM_RED", {"COMPRESS", "BMW_ROW_BLOCK"}));
  // A rule may name the ops it prunes for: the others' searches keep the operators.
  const auto by_op = parse_pruning(R"({"format":"sparsetune-pruning","version":1,
      "rules":[{"name":"bands","ops":["spmv"],"ban":["COL_DIV"]}]})",
                                   "p.json");
  CHECK_FALSE(prune_for(by_op, f).allows("COL_DIV", {}));
  CHECK_FALSE(prune_for(by_op, f, "spmv").allows("COL_DIV", {}));
  CHECK(prune_for(by_op, f, "spmm").allows("COL_DIV", {}));
  CHECK(prune_for(by_op, f, "spmm").applied.empty());
  CHECK_THROWS_WITH(parse_pruning(R"({"format":"sparsetune-pruning","version":1,
      "rules":[{"name":"x","ops":["spgemm"],"ban":["BIN"]}]})",
                                  "p.json"),
                    Catch::Contains("rules[0].ops"));
  // A long row lifts the short-row rule.
  const auto g = features::alphasparse_features(search_test::irregular(1000));
  CHECK(prune_for(pruning, g).allows("WARP_TOTAL_RED", {}));
}

TEST_CASE("annealing acceptance rule, hand-checked", "[search]") {
  CHECK(acceptance_probability(10, 12, 0.5) == 1.0);
  CHECK(acceptance_probability(10, 10, 0.5) == 1.0);
  // A 10 % loss at t = 0.1: exp(-1); at t = 0.05: exp(-2).
  CHECK(acceptance_probability(10, 9, 0.1) == Approx(std::exp(-1.0)));
  CHECK(acceptance_probability(10, 9, 0.05) == Approx(std::exp(-2.0)));
  CHECK(acceptance_probability(10, 5, 0.0) == 0.0);

  // Cools by the factor per step; freezes after `patience` steps without a new best.
  Annealer a({1.0, 0.5, 0.01, 3}, 1);
  CHECK(a.offer(5));
  CHECK(a.temperature() == Approx(0.5));
  CHECK(a.offer(6));
  CHECK(a.best() == 6);
  CHECK_FALSE(a.frozen());
  a.offer(1), a.offer(1);
  CHECK_FALSE(a.frozen());
  a.offer(1);
  CHECK(a.stall() == 3);
  CHECK(a.frozen());
  // Temperature alone freezes it too: 1 * 0.5^7 < 0.01.
  Annealer b({1.0, 0.5, 0.01, 100}, 1);
  for (int i = 0; i < 7; ++i) b.offer(i);
  CHECK(b.frozen());
}

TEST_CASE("array parameters are discretized", "[search]") {
  // Rows 0..99 of length 1, rows 100..199 of length 40: one mutation at row 100.
  Coo64 c;
  c.rows = 200, c.cols = 64;
  for (std::int64_t r = 0; r < 200; ++r)
    for (std::int64_t k = 0; k < (r < 100 ? 1 : 40); ++k)
      c.row.push_back(r), c.col.push_back(k), c.val.push_back(1);
  std::int64_t dup = 0;
  const auto a = coo_to_csr<std::int64_t, std::int64_t>(c, &dup);
  CHECK(row_len_mutation_bounds(a, 2, 4) == std::vector<std::int64_t>{100});
  // Three parts: the mutation, then an even cut.
  const auto b3 = row_len_mutation_bounds(a, 3, 4);
  REQUIRE(b3.size() == 2);
  CHECK((b3[0] == 66 || b3[0] == 100));
  CHECK(std::is_sorted(b3.begin(), b3.end()));
  // A ratio no change reaches: even cuts only.
  CHECK(row_len_mutation_bounds(a, 2, 100) == std::vector<std::int64_t>{100});
  CHECK(row_len_mutation_bounds(a, 4, 100) == std::vector<std::int64_t>{50, 100, 150});
  CHECK(pow2_bin_bounds(3, 2) == std::vector<std::int64_t>{2, 8});
  CHECK(pow2_bin_bounds(1, 2).empty());
}

TEST_CASE("a boolean parameter is a grid axis of 0 and 1", "[search]") {
  const auto space = load_search_space(default_search_config_dir() + "/space.json");
  const auto* axis = space.axis("BMT_NNZ_BLOCK", "interleave");
  REQUIRE(axis);
  CHECK(axis->strategy == Discretization::Flag);
  CHECK(axis->coarse == std::vector<std::int64_t>{0, 1});
  const std::string head = R"({"format":"sparsetune-search-space","version":1,"params":[)";
  CHECK(error_of([&] {
          parse_search_space(
              head + R"({"op":"BMT_NNZ_BLOCK","param":"interleave","coarse":[0,2],"fine":[1]}]})",
              "space.json");
        }).find("outside the operator's range") != std::string::npos);

  graph::Graph g;
  g.ops.push_back({"COMPRESS", {}, {}});
  g.ops.push_back(
      {"BMT_NNZ_BLOCK", {{"nnz", 4}, {"count_rows", false}, {"interleave", false}}, {}});
  const auto slots = tunable_slots(g, space);
  std::vector<std::int64_t> point;
  int at = -1;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    point.push_back(slots[i].axis->coarse.front());
    if (slots[i].axis == axis) at = static_cast<int>(i);
  }
  REQUIRE(at >= 0);
  const auto a = search_test::irregular(100);
  point[at] = 1;
  CHECK(with_point(g, slots, point, a).ops[1].params.at("interleave") == true);
  point[at] = 0;
  CHECK(with_point(g, slots, point, a).ops[1].params.at("interleave") == false);
}
