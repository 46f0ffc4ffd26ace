#pragma once
// Random valid graphs, drawn from the registry stage by stage: any operator whose precondition
// holds may be chosen, with parameters drawn from its schema. The search enumerates structures
// this way, and tests use it to check compositions nobody wrote by hand.
#include <cstdint>
#include <random>
#include <string>

#include "graph/graph.hpp"

namespace sparsetune::graph {

struct RandomGraphOptions {
  int max_div_depth = 1;           // nested dividing operators
  int max_converting = 2;          // converting operators before COMPRESS (dividing ones included)
  int max_mapping = 4;             // mapping operators
  double p_extra_reduction = 0.5;  // chance of each reduction level after the thread one
  std::int64_t max_block = 64;     // upper bound drawn for sizes (rows, nnz, cols, windows)
  std::string op = "spmv";         // the graph's op: "spmm" graphs get a COL_TILE in each part
};

// Always structurally valid (validate() passes); a matrix may still break a data rule.
Graph random_graph(std::mt19937_64& rng, const RandomGraphOptions& opt = {});

}  // namespace sparsetune::graph
