#pragma once
// A candidate's launch geometry, estimated from the matrix's size and the graph's mapping
// parameters alone (no format is designed): how many thread blocks of how many threads it
// starts, and how many waves those are on an H100-class GPU (132 SMs, 2048 threads and 32
// blocks per SM). A ranking model sees the parameters one by one; what makes a kernel of
// 32-thread blocks slow on a large matrix (half the SM's threads resident at most, waves
// many times over) is a product of them, which trees learn poorly from a few matrices.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace sparsetune::models {

struct LaunchEstimate {
  double blocks = -1;         // thread blocks started (-1: the graph cuts no level)
  double threads = -1;        // threads per block (SET_RESOURCES, else the part's default)
  double occupancy_cap = -1;  // share of an SM's threads its blocks can hold at once
  double waves = -1;          // blocks / (blocks resident on the whole GPU)
};

// The feature names, in the order launch_features() returns the values.
const std::vector<std::string>& launch_feature_names();

// The estimate for `g` on a matrix of `rows` rows and `nnz` entries. The first cut of the
// coarsest level present counts the blocks (BMTB: blocks; BMW: warps; BMT: threads, times the
// lanes of a row); a divided graph is estimated from its first occurrences, as a whole matrix.
LaunchEstimate estimate_launch(const graph::Graph& g, double rows, double nnz);

// log2 of the blocks, threads per block, the occupancy cap and the waves (-1 where unknown).
std::vector<double> launch_features(const LaunchEstimate& e);

}  // namespace sparsetune::models
