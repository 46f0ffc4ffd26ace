#include "models/xgb_classifier.hpp"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace sparsetune::models {

namespace {

void check(int rc, const char* what) {
  if (rc != 0) throw Error(std::string("xgboost: ") + what + ": " + XGBGetLastError());
}

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

XgbClassifier::XgbClassifier(int classes, XgbOptions opt) : classes_(classes), opt_(opt) {
  if (classes < 2) throw Error("xgboost: a classifier needs at least two classes");
}

XgbClassifier::~XgbClassifier() {
  if (booster_) XGBoosterFree(static_cast<BoosterHandle>(booster_));
}

void XgbClassifier::fit(const std::vector<std::vector<double>>& x, const std::vector<int>& labels) {
  if (x.empty() || x.size() != labels.size())
    throw Error("xgboost: training needs as many labels as rows, and at least one");
  const std::size_t width = x.front().size();
  if (width == 0) throw Error("xgboost: rows have no values");
  const auto flat = flatten(x, width);
  std::vector<float> label;
  for (int v : labels) {
    if (v < 0 || v >= classes_) throw Error("xgboost: label out of range");
    label.push_back(static_cast<float>(v));
  }
  if (booster_) XGBoosterFree(static_cast<BoosterHandle>(booster_));
  booster_ = nullptr;
  DMatrix d;
  check(XGDMatrixCreateFromMat(flat.data(), x.size(), width, NAN, &d.h), "training table");
  check(XGDMatrixSetFloatInfo(d.h, "label", label.data(), label.size()), "labels");
  BoosterHandle b = nullptr;
  check(XGBoosterCreate(&d.h, 1, &b), "booster");
  booster_ = b;
  const std::pair<const char*, std::string> params[] = {
      {"objective", "multi:softprob"},
      {"num_class", std::to_string(classes_)},
      {"max_depth", std::to_string(opt_.max_depth)},
      {"eta", std::to_string(opt_.eta)},
      {"min_child_weight", std::to_string(opt_.min_child_weight)},
      {"seed", std::to_string(opt_.seed)},
      {"nthread", std::to_string(opt_.threads)},
      {"verbosity", "0"},
      {"tree_method", "exact"}};
  for (const auto& [k, v] : params) check(XGBoosterSetParam(b, k, v.c_str()), k);
  for (int i = 0; i < opt_.rounds; ++i) check(XGBoosterUpdateOneIter(b, i, d.h), "training");
  width_ = width;
}

std::vector<std::vector<double>> XgbClassifier::predict_proba(
    const std::vector<std::vector<double>>& x) const {
  if (!booster_) throw Error("xgboost: predict before fit");
  if (x.empty()) return {};
  const auto flat = flatten(x, width_);
  DMatrix d;
  check(XGDMatrixCreateFromMat(flat.data(), x.size(), width_, NAN, &d.h), "prediction table");
  bst_ulong n = 0;
  const float* out = nullptr;
  check(XGBoosterPredict(static_cast<BoosterHandle>(booster_), d.h, 0, 0, 0, &n, &out),
        "prediction");
  if (n != x.size() * static_cast<std::size_t>(classes_))
    throw Error("xgboost: prediction count differs from rows × classes");
  std::vector<std::vector<double>> p(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    p[i].assign(out + i * classes_, out + (i + 1) * classes_);
  return p;
}

std::vector<int> XgbClassifier::predict(const std::vector<std::vector<double>>& x) const {
  std::vector<int> out;
  for (const auto& p : predict_proba(x))
    out.push_back(static_cast<int>(std::max_element(p.begin(), p.end()) - p.begin()));
  return out;
}

double XgbClassifier::accuracy(const std::vector<std::vector<double>>& x,
                               const std::vector<int>& labels) const {
  if (x.empty()) return 0.0;
  const auto p = predict(x);
  std::size_t right = 0;
  for (std::size_t i = 0; i < p.size(); ++i) right += p[i] == labels.at(i);
  return static_cast<double>(right) / static_cast<double>(p.size());
}

}  // namespace sparsetune::models
