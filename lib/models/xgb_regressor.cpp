#include "models/xgb_regressor.hpp"

#include <xgboost/c_api.h>

#include <cmath>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace sparsetune::models {

namespace {

void check(int rc, const char* what) {
  if (rc != 0) throw Error(std::string("xgboost: ") + what + ": " + XGBGetLastError());
}

// A DMatrix that frees itself.
struct DMatrix {
  DMatrixHandle h = nullptr;
  ~DMatrix() {
    if (h) XGDMatrixFree(h);
  }
};

std::vector<float> flatten(const std::vector<std::vector<double>>& x, std::size_t width) {
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
  return flat;
}

}  // namespace

XgbRegressor::XgbRegressor(XgbOptions opt) : opt_(opt) {}
XgbRegressor::~XgbRegressor() { release(); }

XgbRegressor::XgbRegressor(XgbRegressor&& o) noexcept
    : opt_(o.opt_), booster_(std::exchange(o.booster_, nullptr)), width_(o.width_) {}

XgbRegressor& XgbRegressor::operator=(XgbRegressor&& o) noexcept {
  if (this != &o) {
    release();
    opt_ = o.opt_;
    booster_ = std::exchange(o.booster_, nullptr);
    width_ = o.width_;
  }
  return *this;
}

void XgbRegressor::release() {
  if (booster_) XGBoosterFree(static_cast<BoosterHandle>(booster_));
  booster_ = nullptr;
}

void XgbRegressor::fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                       const std::vector<double>& weights) {
  if (x.empty() || x.size() != y.size())
    throw Error("xgboost: training needs as many targets as rows, and at least one");
  const std::size_t width = x.front().size();
  if (width == 0) throw Error("xgboost: rows have no values");
  const auto flat = flatten(x, width);
  std::vector<float> label;
  for (double v : y) {
    if (!std::isfinite(v)) throw Error("xgboost: non-finite target");
    label.push_back(static_cast<float>(v));
  }
  if (!weights.empty() && weights.size() != y.size())
    throw Error("xgboost: training needs one weight per row");
  std::vector<float> weight;
  for (double w : weights) {
    if (!std::isfinite(w) || w < 0) throw Error("xgboost: negative or non-finite weight");
    weight.push_back(static_cast<float>(w));
  }
  release();
  DMatrix d;
  check(XGDMatrixCreateFromMat(flat.data(), x.size(), width, NAN, &d.h), "training table");
  check(XGDMatrixSetFloatInfo(d.h, "label", label.data(), label.size()), "labels");
  if (!weight.empty())
    check(XGDMatrixSetFloatInfo(d.h, "weight", weight.data(), weight.size()), "weights");
  BoosterHandle b = nullptr;
  check(XGBoosterCreate(&d.h, 1, &b), "booster");
  booster_ = b;
  const std::pair<const char*, std::string> params[] = {
      {"objective", "reg:squarederror"},
      {"max_depth", std::to_string(opt_.max_depth)},
      {"eta", std::to_string(opt_.eta)},
      {"min_child_weight", std::to_string(opt_.min_child_weight)},
      {"seed", std::to_string(opt_.seed)},
      {"nthread", std::to_string(opt_.threads)},
      {"subsample", std::to_string(opt_.subsample)},
      {"colsample_bytree", std::to_string(opt_.colsample)},
      {"verbosity", "0"},
      {"tree_method", "exact"}};
  for (const auto& [k, v] : params) check(XGBoosterSetParam(b, k, v.c_str()), k);
  for (int i = 0; i < opt_.rounds; ++i) check(XGBoosterUpdateOneIter(b, i, d.h), "training");
  width_ = width;
}

std::string XgbRegressor::save() const {
  if (!booster_) throw Error("xgboost: save before fit");
  bst_ulong n = 0;
  const char* bytes = nullptr;
  check(XGBoosterSaveModelToBuffer(static_cast<BoosterHandle>(booster_), R"({"format":"json"})", &n,
                                   &bytes),
        "saving the model");
  return std::string(bytes, n);
}

XgbRegressor XgbRegressor::load(std::string_view bytes, std::size_t width,
                                const std::string& source) {
  if (width == 0) throw Error(source + ": a model of rows with no values");
  XgbRegressor r;
  BoosterHandle b = nullptr;
  check(XGBoosterCreate(nullptr, 0, &b), "booster");
  r.booster_ = b;
  if (XGBoosterLoadModelFromBuffer(b, bytes.data(), bytes.size()) != 0)
    throw Error(source + ": not an XGBoost model: " + XGBGetLastError());
  bst_ulong features = 0;
  check(XGBoosterGetNumFeature(b, &features), "feature count");
  if (features != width)
    throw Error(source + ": the model reads " + std::to_string(features) + " values, expected " +
                std::to_string(width));
  // Prediction is cheap and must be reproducible: one thread, as in training.
  check(XGBoosterSetParam(b, "nthread", "1"), "nthread");
  r.width_ = width;
  return r;
}

std::vector<double> XgbRegressor::predict(const std::vector<std::vector<double>>& x) const {
  if (!booster_) throw Error("xgboost: predict before fit");
  if (x.empty()) return {};
  const auto flat = flatten(x, width_);
  DMatrix d;
  check(XGDMatrixCreateFromMat(flat.data(), x.size(), width_, NAN, &d.h), "prediction table");
  bst_ulong n = 0;
  const float* out = nullptr;
  check(XGBoosterPredict(static_cast<BoosterHandle>(booster_), d.h, 0, 0, 0, &n, &out),
        "prediction");
  if (n != x.size()) throw Error("xgboost: prediction count differs from the rows");
  return std::vector<double>(out, out + n);
}

}  // namespace sparsetune::models
