#pragma once
// IAP-SpTV (JPDC'23) §4.1: the 9 global features that join a slice's bipartite graph at the input
// of Slice-GCN — rows, columns, non-zeros and the mean / max / min non-zeros per row and per
// column — for the whole tensor and for each slice of a chosen mode.
//
// The matrix view: the column is the index along `col_mode` (the mode SpTV multiplies, so a row
// is a fiber, the unit a CSR slice gives a thread), the row is the index along the remaining
// modes. A slice of `mode` is that view restricted to one index of `mode`; the whole tensor is the
// stack of all its slices. Entries are counted as stored (duplicates are not merged).
#include <cstdint>
#include <vector>

#include "core/tensor.hpp"
#include "features/feature.hpp"

namespace sparsetune::features {

struct SliceFeatures {
  std::int64_t index = 0;  // position of the slice along its mode
  std::vector<Feature> features;
};

// Throws Error unless every mode has one index per value, each inside its dimension.
void check_tensor(const SparseTensor& t);

// The column mode used when none is given: the last mode, or the one before it when the last
// mode is the slice mode (slice_mode -1: no slices).
int default_column_mode(int order, int slice_mode = -1);

// The 9 features of the whole tensor; `col_mode` -1 means the last mode.
std::vector<Feature> tensor_features(const SparseTensor& t, int col_mode = -1);

// The 9 features of each non-empty slice along `mode`, ascending by slice index; `col_mode` -1
// means the last mode other than `mode`. Needs an order of at least 2.
std::vector<SliceFeatures> slice_features(const SparseTensor& t, int mode, int col_mode = -1);

}  // namespace sparsetune::features
