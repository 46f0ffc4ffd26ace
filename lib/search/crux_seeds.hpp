#pragma once
// MatXtract's crux predictor in an SpMV search: its (tau_c, tau_r) is a candidate of a
// predict-only answer and the first point of a measuring search's crux search.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "search/crux_bo.hpp"

namespace sparsetune::search {

struct CruxSeeds {
  nlohmann::json pick = nlohmann::json::object();  // report.json's crux_pick
  std::optional<CruxPoint> first;                  // the crux search's first point
  // "crux-predicted", and where the hot part has rows, "crux-predicted-own-rows" (the hot part
  // owning its rows: one launch).
  std::vector<graph::Graph> graphs;
};

// The crux model of `arch` under `models_dir` applied to a matrix's feature row; without a
// model (or with `learned` off) no graphs, and pick says why.
CruxSeeds crux_seeds(const nlohmann::json& feature_row, const std::string& dtype, bool learned,
                     const std::string& models_dir, const std::string& arch);

}  // namespace sparsetune::search
