#pragma once
// IAP-SpTV's two-stage format selection (§4): stage 1 gives Dense to every slice whose density
// reaches sp (0.23 by default, the paper's value; re-derive it per GPU by §4.3's experiment);
// stage 2 asks Slice-GCN for the others. Without a trained model for the target architecture,
// stage 2 falls back to rule_format(), a structural rule that stands in for measured labels: it
// is not trained on any GPU, and predictions made with it say so.
#include <string>
#include <vector>

#include "features/slice_graph.hpp"
#include "models/slice_gcn.hpp"

namespace sparsetune::models {

struct SliceChoice {
  std::int64_t slice = 0;
  int format = 0;  // 0 CSR, 1 COO, 2 ELL, 3 HYB, 4 Dense
  std::string by;  // "density", "slice-gcn" or "rule"
};

struct SelectOptions {
  double sparsity_threshold = 0.23;  // sp
  const SliceGcn* gcn = nullptr;     // null: stage 2 uses rule_format()
};

std::vector<SliceChoice> select_formats(const std::vector<features::SliceInput>& slices,
                                        const SelectOptions& o = {});

// The structural rule (used without a trained model, and to label synthetic slices in tests):
// regular fibers (longest ≤ 1.5 × mean non-empty + 1) → ELL; fibers averaging under 2 entries
// → COO; a few long fibers over a regular body (longest > 8 × mean) → HYB; otherwise CSR.
// Reads only the 9 global features (rows, cols, nnz, row mean/max/min, col mean/max/min).
int rule_format(const std::vector<double>& globals, double non_empty_rows);

}  // namespace sparsetune::models
