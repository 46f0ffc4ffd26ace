#pragma once
// IAP-SpTV §4.1: what Slice-GCN sees of one slice — its bipartite row/column graph (fine-grained
// structure) and its 9 global features — plus the density that stage 1 compares with sp.
//
// A slice of an SpTV matrix view (core/sptv_matrix.hpp) is the matrix fiber × mode index: its
// rows are the fibers of the slice (the product of the remaining modes' sizes, empty ones
// included), its columns the indices along the multiplied mode. A plain matrix is one slice.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/matrix.hpp"
#include "core/sptv_matrix.hpp"

namespace sparsetune::features {

struct SliceGraphOptions {
  // Larger slices are sampled: every k-th non-empty row so that at most max_rows rows and about
  // max_edges edges remain (the 9 global features always describe the whole slice).
  std::int64_t max_rows = 256;
  std::int64_t max_edges = 2048;
};

struct SliceInput {
  std::int64_t slice = 0;  // index along the slice mode
  // The 9 global features of the paper, then the 5 fiber features, in global_feature_names()
  // order.
  std::vector<double> globals;
  double density = 0.0;            // nnz / (rows * cols) of the whole slice
  std::int64_t nonempty_rows = 0;  // rows holding entries, in the whole slice
  std::int32_t row_nodes = 0;      // graph nodes 0 .. row_nodes-1 are rows (sampled, non-empty)
  std::int32_t col_nodes = 0;      // then the columns those rows touch
  std::vector<std::pair<std::int32_t, std::int32_t>> edges;  // (row node, column node), both
                                                             // numbered from 0 in their side
};

// IAP-SpTV's 9 global features (§4.1): rows, cols, nnz, row_nnz_{mean,max,min},
// col_nnz_{mean,max,min} (as in tensor_features), of the slice as a matrix: its rows are every
// fiber of the slice, empty ones included.
inline constexpr int kPaperGlobals = 9;
// Then 5 of the fibers the kernels run over, the non-empty rows (an SpTV view holds no empty
// ones, so a format's threads, padding and imbalance follow these): fibers, fiber_nnz_{mean,
// min,std}, and distinct_cols (the columns they touch). In a slice of a sparse tensor most
// fibers are empty, which leaves row_nnz_min 0 and row_nnz_mean diluted.
inline constexpr int kFiberGlobals = 5;
inline constexpr int kAllGlobals = kPaperGlobals + kFiberGlobals;
// All kPaperGlobals + kFiberGlobals names, the paper's first.
const std::vector<std::string>& global_feature_names();

// One input per non-empty slice of the view, ascending by slice index.
std::vector<SliceInput> slice_inputs(const SptvMatrix& m, const SliceGraphOptions& o = {});

// A matrix as one slice (slice index 0): the form Slice-GCN is trained on from matrices.
SliceInput matrix_input(const Csr64& a, const SliceGraphOptions& o = {});

}  // namespace sparsetune::features
