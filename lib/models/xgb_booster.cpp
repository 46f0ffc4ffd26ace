#include "models/xgb_booster.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/error.hpp"

namespace sparsetune::models::xgb {

void check_model(std::string_view bytes, const std::string& source, int classes) {
  using nlohmann::json;
  json j = json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (j.is_discarded()) {
    // UBJSON, as the rankings are shipped: parsing spmv-rank's 18 MB would add 0.4 s to
    // tune --budget 0, so boosters that large are left to XGBoost as written.
    if (bytes.size() > kCheckedUbjsonBytes) return;
    j = json::from_ubjson(bytes.begin(), bytes.end(), true, false);
  }
  if (j.is_discarded()) throw Error(source + ": not an XGBoost model (neither JSON nor UBJSON)");
  const auto bad = [&source](const std::string& why) {
    return Error(source + ": not a valid XGBoost model: " + why);
  };
  try {
    const auto& learner = j.at("learner");
    const auto& param = learner.at("learner_model_param");
    const auto number = [](const json& v) {
      return v.is_string() ? std::stoll(v.get<std::string>()) : v.get<long long>();
    };
    const long long features = number(param.at("num_feature"));
    if (classes > 0 && std::max(1LL, number(param.at("num_class"))) != classes)
      throw bad("it has " + param.at("num_class").dump() + " classes, " + std::to_string(classes) +
                " expected");
    const auto& booster = learner.at("gradient_booster");
    const auto& model =
        booster.contains("gbtree") ? booster.at("gbtree").at("model") : booster.at("model");
    const auto& trees = model.at("trees");
    for (std::size_t t = 0; t < trees.size(); ++t) {
      const auto& left = trees[t].at("left_children");
      const auto& right = trees[t].at("right_children");
      const auto& split = trees[t].at("split_indices");
      const std::size_t n = left.size();
      const std::string which = "tree " + std::to_string(t);
      if (n == 0 || right.size() != n || split.size() != n)
        throw bad(which + " has child or split lists of different lengths");
      // Each node reached once from the root: no loop, no node with two parents.
      std::vector<char> seen(n, 0);
      std::vector<std::size_t> stack = {0};
      seen[0] = 1;
      while (!stack.empty()) {
        const std::size_t i = stack.back();
        stack.pop_back();
        const long long l = left[i].get<long long>(), r = right[i].get<long long>();
        if ((l == -1) != (r == -1))
          throw bad(which + ": node " + std::to_string(i) + " has one child");
        if (l == -1) continue;
        const long long f = split[i].get<long long>();
        if (f < 0 || f >= features)
          throw bad(which + ": node " + std::to_string(i) + " splits on feature " +
                    std::to_string(f) + " of " + std::to_string(features));
        for (const long long c : {l, r}) {
          if (c < 0 || c >= static_cast<long long>(n) || seen[static_cast<std::size_t>(c)])
            throw bad(which + ": node " + std::to_string(i) + " links to node " +
                      std::to_string(c) + ", which is not a new node of the tree");
          seen[static_cast<std::size_t>(c)] = 1;
          stack.push_back(static_cast<std::size_t>(c));
        }
      }
    }
  } catch (const json::exception& e) {
    throw bad(std::string("unexpected layout (") + e.what() + ")");
  } catch (const std::logic_error& e) {  // stoll of a count that is not a number
    throw bad(std::string("a count that is not a number (") + e.what() + ")");
  }
}

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
