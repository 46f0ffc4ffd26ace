#pragma once
// The search's data: the parameter space (coarse and fine grids of each tunable operator
// parameter, discretization strategies of array-typed ones, limits, annealing schedules) and the
// pruning rules (a ban list and feature-driven rules). Both are JSON files in configs/search/,
// loaded and validated here; every error names the file and the entry.
#include <cstdint>
#include <string>
#include <vector>

#include "features/feature.hpp"

namespace sparsetune::search {

struct AnnealOptions {
  double t0 = 0.25;       // initial temperature, in units of relative GFLOP/s
  double cooling = 0.85;  // temperature factor per step
  double t_min = 0.02;    // frozen below this
  int patience = 8;       // steps without a new best before stopping
};

// Array-typed parameters become one integer each (AlphaSparse §VI-B).
enum class Discretization {
  None,
  // ROW_DIV.bounds: cut where the row length changes by at least the integer factor (the
  // strongest changes first, as many cuts as the structure has parts - 1; even cuts otherwise).
  DivInRowLenMutation,
  // BIN.bounds: row-length thresholds first, first*4, first*16, ... (one per part - 1).
  RowLenPow2Bins,
  // A boolean parameter (BMT_NNZ_BLOCK.interleave): 0 false, 1 true.
  Flag,
};
const char* discretization_name(Discretization d);

struct ParamAxis {
  std::string op, param;
  Discretization strategy = Discretization::None;
  std::vector<std::int64_t> coarse, fine;
};

struct SearchSpace {
  int max_coarse_points = 12;  // coarse grid points measured per structure (sampled beyond)
  int max_fine_points = 256;   // fine grid points the model predicts per structure
  int fine_measured = 2;       // predicted best fine points measured per structure
  int max_structures = 48;
  // With a GPU and a budget, a frozen structure annealer is reheated while fewer candidates than
  // this were measured and time is left: on a large matrix the measured ones are few, and the
  // budget, not the schedule, should say when to stop.
  int min_candidates = 200;
  int max_converting = 1;  // converting operators grown before COMPRESS
  int max_mapping = 3;     // mapping operators grown after it
  AnnealOptions structures, parameters;
  std::vector<ParamAxis> axes;

  const ParamAxis* axis(const std::string& op, const std::string& param) const;
};

struct Condition {
  std::string feature;  // an AlphaSparse feature (features::alphasparse_features)
  bool below = true;    // true: value < threshold; false: value >= threshold
  double threshold = 0;
};

struct PruningRule {
  std::string name;
  std::vector<Condition> when;     // all must hold (empty: always)
  std::vector<std::string> after;  // applies once the graph holds any of these (empty: always)
  std::vector<std::string> ban;
  std::vector<std::string> ops;  // the ops whose searches it prunes (empty: every op)
};

struct Pruning {
  std::vector<std::string> ban;  // never proposed
  std::vector<PruningRule> rules;
};

// Operators a matrix's features rule out, and the names of the rules that did.
struct PruneSet {
  std::vector<std::string> banned;       // from the ban list and the rules without `after`
  std::vector<PruningRule> conditional;  // rules with `after` whose conditions hold
  std::vector<std::string> applied;      // names of rules whose conditions hold
  // Whether `op` may follow a graph that holds `ops_so_far`.
  bool allows(const std::string& op, const std::vector<std::string>& ops_so_far) const;
};

SearchSpace load_search_space(const std::string& path);
Pruning load_pruning(const std::string& path);
SearchSpace parse_search_space(const std::string& text, const std::string& source);
Pruning parse_pruning(const std::string& text, const std::string& source);

// `op`: the search's op; rules naming other ops do not apply.
PruneSet prune_for(const Pruning& p, const std::vector<features::Feature>& alphasparse,
                   const std::string& op = "spmv");

// configs/search of the source tree (or $SPARSETUNE_CONFIG_DIR/search when set).
std::string default_search_config_dir();
// configs/graphs likewise: the known formats that seed the search.
std::string default_graphs_dir();

}  // namespace sparsetune::search
