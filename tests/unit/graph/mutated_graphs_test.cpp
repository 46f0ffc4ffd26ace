// Graphs mutated at random (operators dropped, swapped, duplicated; parameters set to odd
// values) are either rejected with a GraphError or DesignError naming a rule, or designed into a
// format that computes the reference result: never a crash, a hang or a wrong answer.
#include <catch2/catch.hpp>
#include <random>

#include "core/reference.hpp"
#include "graph/designer.hpp"
#include "graph/interpreter.hpp"
#include "graph/random_graph.hpp"
#include "graph/registry.hpp"
#include "graph_test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::graph;

namespace {

nlohmann::json odd_value(std::mt19937_64& rng) {
  switch (rng() % 7) {
    case 0:
      return -1;
    case 1:
      return 0;
    case 2:
      return 1;
    case 3:
      return std::int64_t{1} << 40;
    case 4:
      return "7";
    case 5:
      return true;
    default:
      return 3.5;
  }
}

void mutate(std::vector<OpNode>& ops, std::mt19937_64& rng) {
  if (ops.empty()) return;
  const std::size_t i = rng() % ops.size();
  switch (rng() % 5) {
    case 0:
      ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    case 1:
      std::swap(ops[i], ops[rng() % ops.size()]);
      break;
    case 2:
      ops.insert(ops.begin() + static_cast<std::ptrdiff_t>(i), ops[rng() % ops.size()]);
      break;
    case 3: {
      const auto& all = operators();
      ops[i].op = all[rng() % all.size()]->name();
      ops[i].params = nlohmann::json::object();
      break;
    }
    default: {
      const auto* op = find_operator(ops[i].op);
      const auto specs = op ? op->params() : std::vector<ParamSpec>{};
      if (!specs.empty()) ops[i].params[specs[rng() % specs.size()].name] = odd_value(rng);
      break;
    }
  }
  if (ops.empty()) return;
  for (auto& b : ops[std::min(i, ops.size() - 1)].branches)
    if (rng() % 2) mutate(b, rng);
}

}  // namespace

TEST_CASE("mutated graphs are rejected by a named rule or computed correctly", "[graph]") {
  const Csr64 a = test::random_matrix(77, 90, 70, 0.06, 0.3);
  const auto x = test::test_x(a.cols);
  const auto ref = spmv_reference(a, x);
  std::mt19937_64 rng(8128);
  int invalid = 0, refused = 0, computed = 0;
  for (int i = 0; i < 2500; ++i) {
    Graph g = random_graph(rng);
    for (int m = 1 + static_cast<int>(rng() % 3); m > 0; --m) mutate(g.ops, rng);
    // Through JSON, as a user's file would come.
    const auto text = graph_to_json(g).dump();
    INFO(text);
    try {
      Graph h = graph_from_json(nlohmann::json::parse(text));
      validate(h);
      DesignOptions o;
      o.max_padding = 64;
      const Format f = design(h, a, o);
      REQUIRE(relative_l2_error(interpret(f, x), ref) <= 1e-12);
      ++computed;
    } catch (const GraphError& e) {
      REQUIRE(std::string(e.what()).find("ops") != std::string::npos);
      ++invalid;
    } catch (const DesignError& e) {
      REQUIRE(std::string(e.what()).find("rule:") != std::string::npos);
      ++refused;
    }
  }
  INFO(invalid << " invalid, " << refused << " refused, " << computed << " computed");
  REQUIRE(invalid > 500);
  REQUIRE(computed > 30);
}
