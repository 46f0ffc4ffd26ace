#pragma once
// The operator graph: an ordered list of operators; a dividing operator ends its list and
// carries one sub-graph per part it makes. JSON form:
//   {"format": "sparsetune-graph", "version": 1, "name": "csr-vector", "op": "spmv",
//    "ops": [{"op": "COMPRESS"}, {"op": "BMW_ROW_BLOCK", "rows": 1}, ...,
//            {"op": "ROW_DIV", "count": 2, "branches": [[...], [...]]}]}
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "graph/operator.hpp"

namespace sparsetune::graph {

struct OpNode {
  std::string op;
  nlohmann::json params = nlohmann::json::object();  // defaults filled in by validate()
  std::vector<std::vector<OpNode>> branches;
};

struct Graph {
  std::string name;
  std::string op = "spmv";
  std::vector<OpNode> ops;
};

// Parses the JSON form; throws GraphError naming `source` and the offending field.
Graph graph_from_json(const nlohmann::json& j, const std::string& source = "graph");
nlohmann::json graph_to_json(const Graph& g);

// Checks every parameter and dependency rule, filling in parameter defaults. Throws GraphError
// naming the operator, its position (ops[2].branches[1][0]) and the rule it breaks.
void validate(Graph& g, const std::string& source = "graph");

Graph read_graph(const std::string& path);  // parsed and validated
// The same from text: at most 4096 operators, branches at most 8 levels deep; every error names
// `source` and the operator at fault.
Graph parse_graph(const std::string& text, const std::string& source);
inline constexpr std::uintmax_t kMaxGraphBytes = 16u << 20;  // a graph file's largest size
void write_graph(const std::string& path, const Graph& g);

// One line per operator, for comments and logs: "COMPRESS > BMT_ROW_BLOCK(rows=1) > ...".
std::string describe(const Graph& g);

}  // namespace sparsetune::graph
