#pragma once
// The row order `tune --op spmm` tries the warp-per-row SpMM graph under first: the shipped
// row-order model's pick for this matrix and N (models/row_order_model.hpp), or LPT when no
// current model is shipped for the architecture (or learned models are off).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/matrix.hpp"
#include "core/row_orders.hpp"
#include "graph/graph.hpp"

namespace sparsetune::search {

struct RowOrderPick {
  int order = 4;        // index into row_orders::all_orders()
  std::string by;       // "row-order model (sm_90)" or "default"
  std::string why_not;  // why no model picked it ("" when one did)
  int classified = -1;  // the model's direct classifier's pick (-1: none)
  // The rule the pick's Hamming search runs under: the model's, else the default.
  row_orders::Candidates candidates = row_orders::Candidates::shared_lines;
  double pick_ms = 0;  // features and prediction
  nlohmann::json to_json() const;
};

RowOrderPick predict_row_order(const Csr64& a, std::int64_t n, bool learned,
                               const std::string& models_dir, const std::string& arch);

// The warp-per-row kernel (`row_kernel`) under the predicted order, put first among `seeds`, where
// a search scores it first (the same graph further down is dropped); returns the pick.
RowOrderPick place_row_order_seed(std::vector<graph::Graph>& seeds, const graph::Graph& row_kernel,
                                  const Csr64& a, std::int64_t n, bool learned,
                                  const std::string& models_dir, const std::string& arch);

}  // namespace sparsetune::search
