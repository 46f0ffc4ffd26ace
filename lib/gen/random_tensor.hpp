#pragma once
// Random sparse tensors with distinct coordinates and optionally skewed slice sizes.
#include <cstdint>
#include <vector>

#include "core/tensor.hpp"

namespace sparsetune::gen {

// Coordinates: mode 0 drawn with P(i) ~ (i + 1)^-skew (0 = uniform; larger skew piles the
// entries into the first slices), every other mode uniform. Repeated coordinates are drawn
// again (never summed), so exactly nnz distinct entries come out, sorted lexicographically by
// mode 0, 1, ... Values uniform in (0, 1]. Throws when nnz exceeds the number of cells or when
// the skew concentrates more entries in the first slices than they can hold (detected after
// 32 nnz + 4096 draws, which a feasible request does not come near).
struct RandomTensorParams {
  std::vector<std::int64_t> dims = {100, 100, 100};
  std::int64_t nnz = 10000;
  double skew = 0.0;
};
SparseTensor random_tensor(const RandomTensorParams& p, std::uint64_t seed);

}  // namespace sparsetune::gen
