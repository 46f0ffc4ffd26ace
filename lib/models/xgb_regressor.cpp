#include "models/xgb_regressor.hpp"

#include <xgboost/c_api.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "models/xgb_booster.hpp"

namespace sparsetune::models {

using xgb::check;

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
  xgb::DMatrix d;
  xgb::make_table(d, x, width, "training table");
  std::vector<float> label;
  for (double v : y) {
    if (!std::isfinite(v)) throw Error("xgboost: non-finite target");
    label.push_back(static_cast<float>(v));
  }
  xgb::set_weights(d, weights, x.size());  // before the old model goes: bad weights keep it
  release();
  check(XGDMatrixSetFloatInfo(d.h, "label", label.data(), label.size()), "labels");
  auto params = xgb::common_params(opt_);
  params.push_back({"objective", "reg:squarederror"});
  params.push_back({"subsample", std::to_string(opt_.subsample)});
  params.push_back({"colsample_bytree", std::to_string(opt_.colsample)});
  if (std::isfinite(opt_.base_score))
    params.push_back({"base_score", std::to_string(opt_.base_score)});
  booster_ = xgb::train(d, params, opt_.rounds);
  width_ = width;
}

namespace {
std::string save_as(void* booster, const char* config) {
  if (!booster) throw Error("xgboost: save before fit");
  bst_ulong n = 0;
  const char* bytes = nullptr;
  check(XGBoosterSaveModelToBuffer(static_cast<BoosterHandle>(booster), config, &n, &bytes),
        "saving the model");
  return std::string(bytes, n);
}
}  // namespace

std::string XgbRegressor::save() const { return save_as(booster_, R"({"format":"json"})"); }
std::string XgbRegressor::save_binary() const { return save_as(booster_, R"({"format":"ubj"})"); }

XgbRegressor XgbRegressor::load(std::string_view bytes, std::size_t width,
                                const std::string& source) {
  if (width == 0) throw Error(source + ": a model of rows with no values");
  XgbRegressor r;
  BoosterHandle b = nullptr;
  check(XGBoosterCreate(nullptr, 0, &b), "booster");
  r.booster_ = b;
  xgb::check_model(bytes, source, 0);
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

XgbRegressor XgbRegressor::average(const std::vector<XgbRegressor>& models) {
  if (models.empty()) throw Error("xgboost: a mean of no models");
  for (const auto& m : models)
    if (!m.fitted()) throw Error("xgboost: a mean of models not all fitted");
  if (models.size() == 1) return load(models.front().save(), models.front().width(), "model");
  // XGBoost's JSON model (learner.gradient_booster.model): the trees, one tree_info entry each,
  // and their count; a leaf's value is its split_conditions entry (left_children == -1).
  using nlohmann::json;
  try {
    // The first model's JSON is the result's; every model's trees (the first's too) are moved
    // into `trees`, scaled, and put back at the end. Each model is serialised and parsed once.
    json merged, trees = json::array(), info = json::array();
    const double scale = 1.0 / static_cast<double>(models.size());
    for (const auto& m : models) {
      if (m.width() != models.front().width())
        throw Error("xgboost: a mean of models of different widths");
      json one = json::parse(m.save());
      if (!merged.is_null() && one.at("learner").at("learner_model_param").at("base_score") !=
                                   merged.at("learner").at("learner_model_param").at("base_score"))
        throw Error("xgboost: a mean of models of different base scores");
      auto& g = one.at("learner").at("gradient_booster").at("model");
      for (json& t : g.at("trees")) {
        const auto& left = t.at("left_children");
        auto& value = t.at("split_conditions");
        for (std::size_t i = 0; i < value.size(); ++i)
          if (left.at(i).get<int>() == -1) value[i] = value[i].get<double>() * scale;
        for (auto& w : t.at("base_weights")) w = w.get<double>() * scale;
        t["id"] = trees.size();
        trees.push_back(std::move(t));
      }
      for (const auto& i : g.at("tree_info")) info.push_back(i);
      if (merged.is_null()) merged = std::move(one);
    }
    auto& gbtree = merged.at("learner").at("gradient_booster").at("model");
    gbtree["gbtree_model_param"]["num_trees"] = std::to_string(trees.size());
    gbtree["trees"] = std::move(trees);
    gbtree["tree_info"] = std::move(info);
    XgbRegressor r = load(merged.dump(), models.front().width(), "averaged model");
    r.opt_ = models.front().opt_;
    return r;
  } catch (const json::exception& e) {  // a layout other than this XGBoost's
    throw Error(std::string("xgboost: averaging models: unexpected model layout: ") + e.what());
  }
}

std::vector<double> XgbRegressor::predict(const std::vector<std::vector<double>>& x) const {
  if (!booster_) throw Error("xgboost: predict before fit");
  if (x.empty()) return {};
  const auto out = xgb::predict(static_cast<BoosterHandle>(booster_), x, width_, 1);
  return std::vector<double>(out.begin(), out.end());
}

}  // namespace sparsetune::models
