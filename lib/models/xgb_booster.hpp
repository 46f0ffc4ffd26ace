#pragma once
// What the XGBoost regressor and classifier share of the C API: tables of finite rows turned into
// DMatrix handles, a booster trained on one with a parameter list, and raw predictions.
#include <xgboost/c_api.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/xgb_regressor.hpp"

namespace sparsetune::models::xgb {

// Throws Error("xgboost: <what>: <the library's message>") when rc is not 0.
void check(int rc, const char* what);

// Throws Error naming `source` unless `bytes` (an XGBoost model, JSON or UBJSON) holds trees
// whose child links form trees, every split reading one of the model's features, and, with
// `classes` > 0, that many classes. XGBoost's loader takes the links on trust, and one that
// loops would make every prediction hang. (In xgb_model_check.cpp.)
void check_model(std::string_view bytes, const std::string& source, int classes = 0);

// A DMatrix that frees itself.
struct DMatrix {
  DMatrixHandle h = nullptr;
  DMatrix() = default;
  DMatrix(const DMatrix&) = delete;
  DMatrix& operator=(const DMatrix&) = delete;
  ~DMatrix() {
    if (h) XGDMatrixFree(h);
  }
};

using Params = std::vector<std::pair<const char*, std::string>>;

// Rows x, all of `width` finite values, as a DMatrix (`what` names it in errors).
void make_table(DMatrix& d, const std::vector<std::vector<double>>& x, std::size_t width,
                const char* what);

// Sets one weight per row of `d` (`rows` of them) when `weights` is not empty; throws Error on a
// count other than `rows`, or a negative or non-finite weight.
void set_weights(DMatrix& d, const std::vector<double>& weights, std::size_t rows);

// The parameters both models set from XgbOptions (depth, eta, child weight, seed, threads, quiet,
// exact trees); each model adds its objective.
Params common_params(const XgbOptions& opt);

// A booster trained on d for opt.rounds rounds with `params`; the caller owns (and frees) it.
BoosterHandle train(const DMatrix& d, const Params& params, int rounds);

// The booster's raw outputs for rows x of `width` values, expected `per_row` of them per row.
std::vector<float> predict(BoosterHandle b, const std::vector<std::vector<double>>& x,
                           std::size_t width, std::size_t per_row);

}  // namespace sparsetune::models::xgb
