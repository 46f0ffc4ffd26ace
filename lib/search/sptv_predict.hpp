#pragma once
// The predict-only design of `tune --op sptv` (--budget 0, or no GPU): Slice-GCN's per-slice
// selection against every slice in one format, whichever stores the fewest bytes. A slice's label
// is its own kernel's time, but the labels do not compose into a batch: each part of a mix of
// formats stores its fibers' row numbers (origin_row), which a single part does not, and runs a
// kernel of its own. Measured on the GPU, a mix was never faster than the fastest single format
// (docs/benchmarks.md), and the pipeline's time follows the bytes it sends.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "search/sptv_designs.hpp"

namespace sparsetune::search {

struct SptvPredictOptions {
  // Ranked by the kernels' device-resident time (tune's default), not by the pipeline's transfers.
  bool by_kernels = true;
  // Entries sampled to size the single formats: every k-th slice, for about this many entries.
  std::int64_t sample_nnz = std::int64_t{1} << 19;
  // From this many entries, all COO ranked by the kernels is predicted in column-sorted thread
  // blocks: more bytes, but sums in shared memory instead of atomics into y. On an H200 it ran
  // 0.74-0.96x COO's time on 8 of 9 views of 10^6 to 10^7 entries (1.01x on the ninth), and
  // 1.1-3.5x on the shared tensors of 10^4 to 1.7 10^5 entries (docs/benchmarks.md).
  std::int64_t sorted_coo_from = std::int64_t{1} << 20;
  // When the view is sampled, the single formats whose sampled bytes come within this share of
  // the fewest (the selection's included) are designed whole, if two or more candidates are
  // that close: a sample's HYB width and narrowed indices put its bytes up to 7 % off the whole
  // view's (docs/benchmarks.md), more than some contests are apart. 0: never.
  double whole_within = 0.10;
};

struct SptvPrediction {
  std::string design;       // "selected", or the single format's "all CSR", "all COO", ...
  int format = -1;          // the single format picked (graph::SliceFormat); -1: the selection
  bool coo_sorted = false;  // all COO, in column-sorted thread blocks
  // One per candidate, the selection first: design, bytes_per_entry (the selection's exact, the
  // single formats' sampled unless `sampled` is false), picked.
  nlohmann::json candidates = nlohmann::json::array();
  // The picked single format's choices (every input, `by` "fewest bytes"); empty for the selection.
  std::vector<models::SliceChoice> choices() const;
  std::vector<std::int64_t> slices;  // the inputs' slices, for choices()
  // The predicted single format's whole design, when it was built to decide a close contest
  // (COO's atomic form only); tune emits it as it is.
  std::optional<SptvDesign> whole;
};

// `selected` is the selection's design of the whole view: its bytes are exact, for a mix's row
// numbers depend on how its parts interleave, which a sample of the slices does not keep. The
// single formats (all CSR, COO, ELL and HYB, except one that the selection already uses for every
// slice; Dense stores every column and is never one) are sized on a sample
// (sampled_bytes_per_entry). The fewest bytes an entry win; a tie keeps the selection. All COO
// (picked, or the selection itself) is predicted column-sorted by o.sorted_coo_from.
SptvPrediction predict_sptv_design(const SptvDesignContext& c, const SptvDesign& selected,
                                   const SptvPredictOptions& o = {});

}  // namespace sparsetune::search
