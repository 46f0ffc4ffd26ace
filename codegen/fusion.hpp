#pragma once
// Horizontal fusion: every part in one launch, each part a range of grid x, when at least two
// parts have work, they share a thread count and their shared memory fits one block's 48 KiB.
// The parts then run at once rather than one after another.
//  - SpMM: a part that shares rows of C with another part adds into them atomically (as
//    LiteForm's buckets of several partitions do); a part alone on its rows keeps its store or
//    plain add.
//  - SpMV: store-only formats only (every row of y written once over all parts, by row bands,
//    length bins or a crux whose hot part owns its rows), so no part needs atomics or an order.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/format.hpp"

namespace sparsetune::codegen {

inline constexpr const char* kFusedKernel = "sparsetune_fused";

struct Fusion {
  bool fused = false;
  std::string why;           // why not, when there are several parts with work and no fusion
  std::vector<bool> atomic;  // per part: adds into C atomically
  std::int64_t grid = 0;     // fused: the parts' grids summed (grid x of the one launch)
  // SpMM: the fewest columns of C a block of a part with work covers (its tile times its lanes);
  // 32 when no part has work.
  std::int64_t narrowest_tile = 32;
};

Fusion plan_fusion(const graph::Format& f);

}  // namespace sparsetune::codegen
