#include "models/xgb_classifier.hpp"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "models/xgb_booster.hpp"

namespace sparsetune::models {

XgbClassifier::XgbClassifier(int classes, XgbOptions opt) : classes_(classes), opt_(opt) {
  if (classes < 2) throw Error("xgboost: a classifier needs at least two classes");
}

XgbClassifier::~XgbClassifier() {
  if (booster_) XGBoosterFree(static_cast<BoosterHandle>(booster_));
}

XgbClassifier::XgbClassifier(XgbClassifier&& o) noexcept
    : classes_(o.classes_),
      opt_(o.opt_),
      booster_(std::exchange(o.booster_, nullptr)),
      width_(o.width_) {}

void XgbClassifier::fit(const std::vector<std::vector<double>>& x, const std::vector<int>& labels,
                        const std::vector<double>& weights) {
  if (x.empty() || x.size() != labels.size())
    throw Error("xgboost: training needs as many labels as rows, and at least one");
  const std::size_t width = x.front().size();
  if (width == 0) throw Error("xgboost: rows have no values");
  xgb::DMatrix d;
  xgb::make_table(d, x, width, "training table");
  std::vector<float> label;
  for (int v : labels) {
    if (v < 0 || v >= classes_) throw Error("xgboost: label out of range");
    label.push_back(static_cast<float>(v));
  }
  xgb::set_weights(d, weights, x.size());  // before the old model goes: bad weights keep it
  if (booster_) XGBoosterFree(static_cast<BoosterHandle>(booster_));
  booster_ = nullptr;
  xgb::check(XGDMatrixSetFloatInfo(d.h, "label", label.data(), label.size()), "labels");
  auto params = xgb::common_params(opt_);
  params.push_back({"objective", "multi:softprob"});
  params.push_back({"num_class", std::to_string(classes_)});
  booster_ = xgb::train(d, params, opt_.rounds);
  width_ = width;
}

std::vector<std::vector<double>> XgbClassifier::predict_proba(
    const std::vector<std::vector<double>>& x) const {
  if (!booster_) throw Error("xgboost: predict before fit");
  if (x.empty()) return {};
  const auto out = xgb::predict(static_cast<BoosterHandle>(booster_), x, width_,
                                static_cast<std::size_t>(classes_));
  std::vector<std::vector<double>> p(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    p[i].assign(out.begin() + i * classes_, out.begin() + (i + 1) * classes_);
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

std::string XgbClassifier::save() const {
  if (!booster_) throw Error("xgboost: save before fit");
  bst_ulong n = 0;
  const char* bytes = nullptr;
  xgb::check(XGBoosterSaveModelToBuffer(static_cast<BoosterHandle>(booster_),
                                        R"({"format":"json"})", &n, &bytes),
             "saving the model");
  return std::string(bytes, n);
}

XgbClassifier XgbClassifier::load(std::string_view bytes, int classes, std::size_t width,
                                  const std::string& source) {
  if (width == 0) throw Error(source + ": a model of rows with no values");
  XgbClassifier c(classes);
  BoosterHandle b = nullptr;
  xgb::check(XGBoosterCreate(nullptr, 0, &b), "booster");
  c.booster_ = b;
  xgb::check_model(bytes, source, classes);
  if (XGBoosterLoadModelFromBuffer(b, bytes.data(), bytes.size()) != 0)
    throw Error(source + ": not an XGBoost model: " + XGBGetLastError());
  bst_ulong features = 0;
  xgb::check(XGBoosterGetNumFeature(b, &features), "feature count");
  if (features != width)
    throw Error(source + ": the classifier reads " + std::to_string(features) +
                " values, expected " + std::to_string(width));
  xgb::check(XGBoosterSetParam(b, "nthread", "1"), "nthread");
  c.width_ = width;
  return c;
}

}  // namespace sparsetune::models
