#pragma once
// The predict-only design of `tune --op sptv` (--budget 0, or no GPU): Slice-GCN's per-slice
// selection against every slice in one format, whichever stores the fewest bytes. A slice's label
// is its own kernel's time, but the labels do not compose into a batch: each part of a mix of
// formats stores its fibers' row numbers (origin_row), which a single part does not, and runs a
// kernel of its own. Measured on the GPU, a mix was never faster than the fastest single format
// (docs/benchmarks.md), and the pipeline's time follows the bytes it sends.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "search/sptv_designs.hpp"

namespace sparsetune::search {

// Entries sampled to size the single formats: every k-th slice, for about this many entries.
inline constexpr std::int64_t kPredictSampleNnz = std::int64_t{1} << 19;

struct SptvPrediction {
  std::string design;  // "selected", or the single format's "all CSR", "all COO", ...
  int format = -1;     // the single format picked (graph::SliceFormat); -1: the selection
  // One per candidate, the selection first: design, bytes_per_entry (the selection's exact, the
  // single formats' sampled), picked.
  nlohmann::json candidates = nlohmann::json::array();
  // The picked single format's choices (every input, `by` "fewest bytes"); empty for the selection.
  std::vector<models::SliceChoice> choices() const;
  std::vector<std::int64_t> slices;  // the inputs' slices, for choices()
};

// `selected` is the selection's design of the whole view: its bytes are exact, for a mix's row
// numbers depend on how its parts interleave, which a sample of the slices does not keep. The
// single formats (all CSR, COO, ELL and HYB, except one that the selection already uses for every
// slice; Dense stores every column and is never one) are sized on a sample
// (sampled_bytes_per_entry). The fewest bytes an entry win; a tie keeps the selection.
SptvPrediction predict_sptv_design(const SptvDesignContext& c, const SptvDesign& selected,
                                   std::int64_t sample_nnz = kPredictSampleNnz);

}  // namespace sparsetune::search
