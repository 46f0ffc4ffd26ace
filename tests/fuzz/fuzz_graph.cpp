// Fuzzes the graph JSON reader (the text `emit-kernel --graph` and the tuning database hand to
// it): any input either becomes a validated graph whose JSON reads back to the same graph, or
// raises sparsetune::Error, within the reader's size and nesting bounds.
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "fuzz_check.hpp"
#include "graph/graph.hpp"

using namespace sparsetune;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  graph::Graph g;
  try {
    g = graph::parse_graph(text, "fuzz.json");
  } catch (const Error&) {
    return 0;
  }
  const auto j = graph::graph_to_json(g);
  const graph::Graph h = graph::parse_graph(j.dump(), "again");
  FUZZ_ASSERT(graph::graph_to_json(h) == j);
  FUZZ_ASSERT(!graph::describe(g).empty());
  return 0;
}
