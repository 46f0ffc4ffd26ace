#pragma once
// The search space of one matrix: operator-graph structures grown by appending operators that the
// dependency rules and the pruning rules allow (level 1), and each structure's tunable parameters
// as axes with coarse and fine grids (levels 2 and 3). A point of a grid turns a structure into a
// concrete graph; array-typed parameters are computed from their discretized integer.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/matrix.hpp"
#include "graph/graph.hpp"
#include "search/config.hpp"

namespace sparsetune::search {

// Grows a valid graph: converting operators (a dividing one grows a sub-graph per part), COMPRESS,
// mapping operators, then reductions from the thread level up. Only operators that `prune` allows
// after the operators already placed are proposed. Parameters keep their defaults except booleans
// (structural choices) and the part counts of dividing operators. When `keep_prefix` is set, the
// converting operators and COMPRESS of `from` are kept and only the rest is grown again. The
// graph is of `op`: only operators serving it are proposed, and an SpMM part always gets a
// COL_TILE (its parameters are axes of the space like any other).
// Throws Error when no valid graph comes out of `attempts` tries.
graph::Graph grow_structure(std::mt19937_64& rng, const SearchSpace& space, const PruneSet& prune,
                            const graph::Graph* from = nullptr, int attempts = 64,
                            const std::string& op = "spmv");

// Every operator name of a graph, branches included, in order.
std::vector<std::string> operator_names(const graph::Graph& g);

// A stable identity of a graph (its JSON with defaults filled in), and a short hash of it.
std::string graph_key(const graph::Graph& g);
std::string graph_hash(const graph::Graph& g);

// One tunable parameter of a structure: where its operator is, and its axis.
struct Slot {
  std::vector<int> path;  // op index, then (branch, op index) pairs into sub-graphs
  const ParamAxis* axis = nullptr;
};
std::vector<Slot> tunable_slots(const graph::Graph& g, const SearchSpace& space);

// The coarse or fine grid of the slots' values (all combinations, or `cap` of them drawn without
// repetition when there are more). Deterministic for an rng state.
std::vector<std::vector<std::int64_t>> grid_points(const std::vector<Slot>& slots, bool fine,
                                                   int cap, std::mt19937_64& rng);

// The structure with the point's values set (discretized parameters computed for the matrix).
graph::Graph with_point(const graph::Graph& structure, const std::vector<Slot>& slots,
                        const std::vector<std::int64_t>& point, const Csr64& a);

// DIV_IN_ROW_LEN_MUTATION: parts - 1 strictly increasing row bounds where the (smoothed) row
// length changes by at least the factor `ratio`, strongest first; even cuts fill up.
std::vector<std::int64_t> row_len_mutation_bounds(const Csr64& a, int parts, std::int64_t ratio);
// ROW_LEN_POW2_BINS: first, 4·first, 16·first, ... (parts - 1 thresholds).
std::vector<std::int64_t> pow2_bin_bounds(int parts, std::int64_t first);

}  // namespace sparsetune::search
