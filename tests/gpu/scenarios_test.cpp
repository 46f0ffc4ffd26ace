// The edge-case scenario list (tests/scenarios.hpp, with a dense row of 10^6 entries) through
// the kernels of every known format and of freshly drawn random graphs, in f64 and f32: y = A x,
// alpha/beta with beta = 0 on a poisoned (NaN) y, beta != 0 from a random y, and x holding NaN and
// infinities, whose propagation the worker checks entry by entry.
#include "gen/scenarios.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <limits>
#include <random>

#include "gpu_cases.hpp"
#include "graph/graph.hpp"
#include "search/engine.hpp"

using namespace sparsetune;
using namespace sparsetune::gpu_test;

namespace {

std::vector<double> special_x(std::int64_t cols, const std::string& dtype) {
  auto x = codegen::plan_x(cols, dtype, 7);
  if (cols >= 3) {
    x[cols / 2] = std::numeric_limits<double>::quiet_NaN();
    x[cols / 3] = std::numeric_limits<double>::infinity();
    x[cols - 1] = -std::numeric_limits<double>::infinity();
  }
  return x;
}

// Every variant of one (graph, scenario, dtype); returns whether the Designer accepted it.
bool add_variants(std::vector<Case>& cases, const graph::Graph& g, const gen::Scenario& s,
                  const std::string& dtype) {
  // The reproducer: the scenario's recipe and the graph's JSON.
  const std::string what = s.name + " [" + s.recipe + "] graph " + graph::graph_to_json(g).dump();
  if (!add_case(cases, g, what, s.a, dtype)) return false;
  add_case(cases, g, what, s.a, dtype, {{-2.0, 0.0}, nullptr, ", alpha -2, beta 0, y NaN"});
  add_case(cases, g, what, s.a, dtype, {{0.5, -1.5}, nullptr, ", alpha 0.5, beta -1.5"});
  const auto x = special_x(s.a.cols, dtype);
  add_case(cases, g, what, s.a, dtype, {{}, &x, ", x with NaN and infinities"});
  return true;
}

}  // namespace

TEST_CASE("scenario list through the kernels of every known format", "[gpu][scenarios]") {
  const auto list = gen::scenarios(1000000);
  const auto graphs = search::load_graphs(search::default_graphs_dir());
  REQUIRE(graphs.size() >= 10);
  std::vector<Case> cases;
  int designed = 0, refused = 0;
  for (const auto& g : graphs)
    for (const auto& s : list)
      for (const char* dtype : {"f64", "f32"})
        (add_variants(cases, g, s, dtype) ? designed : refused)++;
  CHECK(designed >= 3 * refused);
  run_cases(cases);
}

TEST_CASE("scenario list through the kernels of random graphs", "[gpu][scenarios]") {
  const char* env = std::getenv("SPARSETUNE_SCENARIO_SEED");
  const std::uint64_t seed = env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
  INFO("SPARSETUNE_SCENARIO_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const auto list = gen::scenarios(100000);
  std::vector<Case> cases;
  for (int i = 0; i < 40; ++i) {
    const auto g = graph::random_graph(rng);
    const auto& s = list[static_cast<std::size_t>(i) % list.size()];
    add_variants(cases, g, s, i % 2 ? "f32" : "f64");
  }
  run_cases(cases);
}
