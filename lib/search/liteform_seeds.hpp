#pragma once
// LiteForm's two predictors in an SpMM search: CELL over the predicted column partitions is a
// seed, and the CELL-or-not model decides where CELL goes. A predict-only answer leaves CELL out
// where the model rules it out; a measuring search tries CELL right after the row-order seed
// where the model expects CELL to win, and everywhere without the model (those times are the
// labels the model is trained from, `collect --op spmm`).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/matrix.hpp"
#include "graph/graph.hpp"

namespace sparsetune::search {

// Adds and places the CELL seeds of `seeds` (whose first is the row-order seed) and fills
// report.json's cell_pick into `pick`; returns how many CELL seeds now follow the first in order.
// `measuring`: a GPU scores the candidates; `predict_only`: --budget 0.
int place_liteform_seeds(std::vector<graph::Graph>& seeds, const Csr64& a, std::int64_t n,
                         const nlohmann::json& feature_row, bool learned,
                         const std::string& models_dir, const std::string& arch, bool measuring,
                         bool predict_only, nlohmann::json& pick);

}  // namespace sparsetune::search
