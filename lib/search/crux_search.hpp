#pragma once
// The crux search (MatXtract §5): Bayesian optimisation over (tau_c, tau_r) where each point is
// the graph CRUX_SPLIT(tau_c, tau_r) [ TC_COMPRESS > TC_MMA_* | cold ] scored by an Evaluator
// (measured on the GPU, or predicted by the cost model without one).
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "search/crux_bo.hpp"
#include "search/engine.hpp"
#include "search/evaluator.hpp"

namespace sparsetune::search {

struct CruxSearchOptions {
  CruxBoOptions bo;
  std::vector<graph::OpNode> cold;  // empty: CSR-vector
  int encoding = 0;                 // TC_COMPRESS's: 0 the storage criterion, 1 dense, 2 sparse
  int width = 4;                    // 4: fp64 tensor cores; 8: fp16 (f16 formats)
  // Each point with a hot part is measured twice, the hot part holding the crux only and holding
  // its rows whole (one launch; CRUX_SPLIT's own_rows), and scores the faster.
  bool own_rows_too = true;
};

struct CruxSearchResult {
  CruxBoResult bo;
  std::vector<Candidate> candidates;    // one per graph measured (one or two a point), in order
  std::vector<Evaluation> evaluations;  // the same graphs' evaluations
  graph::Graph best;                    // the best point's graph (empty ops when all failed)
  std::vector<graph::OpNode> cold;      // the cold sub-graph every point used
  std::string cold_note;                // why the given cold graph was not used ("" when it was)
  Evaluation best_evaluation;
};

// The ops of the fastest correct graph in `history` that runs on CUDA cores alone (no crux, no
// tensor-core operator, any depth): the crux search's cold part. Empty when there is none.
std::vector<graph::OpNode> fastest_cuda_core_ops(const std::vector<Scored>& history);

// At most o.bo.max_evaluations evaluations; a failed one (a design refused, a wrong result) is
// counted and never tried again.
CruxSearchResult search_crux(Evaluator& ev, const CruxSearchOptions& o = {});

}  // namespace sparsetune::search
