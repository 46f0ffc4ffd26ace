#include "models/xgb_booster.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/error.hpp"

namespace sparsetune::models::xgb {

void check(int rc, const char* what) {
  if (rc != 0) throw Error(std::string("xgboost: ") + what + ": " + XGBGetLastError());
}

void make_table(DMatrix& d, const std::vector<std::vector<double>>& x, std::size_t width,
                const char* what) {
  std::vector<float> flat;
  flat.reserve(x.size() * width);
  for (const auto& row : x) {
    if (row.size() != width)
      throw Error("xgboost: row of " + std::to_string(row.size()) + " values, expected " +
                  std::to_string(width));
    for (double v : row) {
      if (!std::isfinite(v)) throw Error("xgboost: non-finite input value");
      flat.push_back(static_cast<float>(v));
    }
  }
  check(XGDMatrixCreateFromMat(flat.data(), x.size(), width, NAN, &d.h), what);
}

Params common_params(const XgbOptions& opt) {
  return {{"max_depth", std::to_string(opt.max_depth)},
          {"eta", std::to_string(opt.eta)},
          {"min_child_weight", std::to_string(opt.min_child_weight)},
          {"seed", std::to_string(opt.seed)},
          {"nthread", std::to_string(opt.threads)},
          {"verbosity", "0"},
          {"tree_method", "exact"}};
}

BoosterHandle train(const DMatrix& d, const Params& params, int rounds) {
  BoosterHandle b = nullptr;
  check(XGBoosterCreate(&d.h, 1, &b), "booster");
  try {
    for (const auto& [k, v] : params) check(XGBoosterSetParam(b, k, v.c_str()), k);
    for (int i = 0; i < rounds; ++i) check(XGBoosterUpdateOneIter(b, i, d.h), "training");
  } catch (...) {
    XGBoosterFree(b);
    throw;
  }
  return b;
}

std::vector<float> predict(BoosterHandle b, const std::vector<std::vector<double>>& x,
                           std::size_t width, std::size_t per_row) {
  DMatrix d;
  make_table(d, x, width, "prediction table");
  bst_ulong n = 0;
  const float* out = nullptr;
  check(XGBoosterPredict(b, d.h, 0, 0, 0, &n, &out), "prediction");
  if (n != x.size() * per_row)
    throw Error(per_row == 1 ? "xgboost: prediction count differs from the rows"
                             : "xgboost: prediction count differs from rows × classes");
  return std::vector<float>(out, out + n);
}

void set_weights(DMatrix& d, const std::vector<double>& weights, std::size_t rows) {
  if (weights.empty()) return;
  if (weights.size() != rows) throw Error("xgboost: training needs one weight per row");
  std::vector<float> w;
  for (double v : weights) {
    if (!std::isfinite(v) || v < 0) throw Error("xgboost: negative or non-finite weight");
    w.push_back(static_cast<float>(v));
  }
  check(XGDMatrixSetFloatInfo(d.h, "weight", w.data(), w.size()), "weights");
}

}  // namespace sparsetune::models::xgb
