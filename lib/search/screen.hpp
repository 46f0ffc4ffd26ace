#pragma once
// The search on a large matrix with a GPU: designing and compiling a candidate on the full
// matrix costs seconds, so the search runs on a row sample (search/row_sample.hpp), where it
// costs a fraction of that, and the fastest distinct candidates it finds there are then measured
// on the full matrix, which decides.
#include <cstdint>
#include <vector>

#include "search/engine.hpp"

namespace sparsetune::search {

struct ScreenOptions {
  // Of the search budget for the sample; the rest confirms. Confirming designs on the full
  // matrix (10-13 s at 16M entries, all at once), so 12 confirmations need about half of a 60 s
  // search.
  double share = 0.5;
  int confirm = 12;  // candidates measured on the full matrix, at most
};

struct ScreenResult {
  SearchResult sample;            // the search on the sample (its times are the sample's)
  std::vector<Scored> confirmed;  // measured on the full matrix, in the order measured
  double sample_s = 0, confirm_s = 0;
};

// `sample_eval` scores candidates on the sample, `full_eval` on the full matrix. `opt.budget_s`
// is the whole search's; `opt.on_scored` is called for the full matrix's measurements only.
// The sample's best is measured on the full matrix whatever the time left, the others while
// they fit, and CSR-vector too when none of them ran correctly, so there is always an answer.
ScreenResult screen_then_confirm(const Csr64& sample, const SearchSpace& space,
                                 const PruneSet& prune, const std::vector<graph::Graph>& seeds,
                                 const graph::Graph& baseline, Evaluator& sample_eval,
                                 Evaluator& full_eval, const SearchOptions& opt,
                                 const ScreenOptions& screen = {});

}  // namespace sparsetune::search
