#pragma once
// Graphs for the codegen tests: the shipped known formats and seeded random compositions.
#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "graph/random_graph.hpp"

namespace sparsetune::test {

inline std::filesystem::path repo_root() {
  return std::filesystem::path(SPARSETUNE_TEST_DATA_DIR).parent_path().parent_path();
}

inline std::vector<graph::Graph> known_graphs() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(repo_root() / "configs" / "graphs"))
    files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::vector<graph::Graph> v;
  for (const auto& f : files) v.push_back(graph::read_graph(f));
  return v;
}

}  // namespace sparsetune::test
