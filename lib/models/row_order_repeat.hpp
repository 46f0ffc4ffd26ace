#pragma once
// How far one collection's row-order labels carry to another collection of the same records: the
// best order of one collection, timed in the other, against the other's own best. The share of
// the oracle's gain it keeps is the scale a predictor's share is read on: the oracle of one
// collection is partly picked by its timing noise, which no predictor knows, so even a predictor
// of the true best order keeps only a few points more (docs/benchmarks.md).
#include <nlohmann/json.hpp>
#include <vector>

namespace sparsetune::models {

// One record's times in each collection that measured it: collections[c][order], < 0 where the
// order has no time there. Order 0 is the original order.
using CollectionTimes = std::vector<std::vector<double>>;

// Over every ordered pair (a, b) of a record's first two collections, both ways, with the
// original order and a best order timed in both: {"records", "pairs", "same_best" (share of the
// pairs whose best orders agree), "oracle_speedup" (b's own best over the original, geometric
// mean), "cross_speedup" (a's best timed in b), "share_of_oracle_gain" ((cross - 1) / (oracle -
// 1), as the predictor's share is computed)}. Records measured once are skipped; with none left,
// "records" is 0 and nothing else is set.
nlohmann::json label_repeatability(const std::vector<CollectionTimes>& records);

}  // namespace sparsetune::models
