#include "search/row_order_pick.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>

#include "core/error.hpp"
#include "core/row_orders.hpp"
#include "features/matrix_features.hpp"
#include "graph/spmm_graph.hpp"
#include "models/row_order_model.hpp"
#include "search/learned_evaluator.hpp"

namespace sparsetune::search {

nlohmann::json RowOrderPick::to_json() const {
  const auto& orders = row_orders::all_orders();
  nlohmann::json j = {{"order", row_orders::name(orders.at(static_cast<std::size_t>(order)))},
                      {"by", by},
                      {"ms", pick_ms}};
  if (!why_not.empty()) j["why_not_predicted"] = why_not;
  if (row_orders::uses_candidates(orders.at(static_cast<std::size_t>(order))))
    j["candidates"] = row_orders::name(candidates);
  if (classified >= 0)
    j["classifier_pick"] = row_orders::name(orders.at(static_cast<std::size_t>(classified)));
  return j;
}

RowOrderPick predict_row_order(const Csr64& a, std::int64_t n, bool learned,
                               const std::string& models_dir, const std::string& arch) {
  RowOrderPick p;
  p.by = "default (LPT)";
  if (!learned) {
    p.why_not = "learned models are off";
    return p;
  }
  const auto t0 = std::chrono::steady_clock::now();
  // A model that is missing, stale or unreadable leaves the default order, and says so once.
  const auto fall_back = [&p] {
    static std::atomic<bool> said{false};
    if (!said.exchange(true)) spdlog::warn("{}; the row order is the default (LPT)", p.why_not);
    return p;
  };
  const auto model = models::RowOrderModel::find(
      models_dir.empty() ? default_models_dir() : models_dir, arch, &p.why_not);
  if (!model) return fall_back();
  try {
    const auto feats = features::feature_values(features::permutation_features(a));
    const int order = model->predict(feats, n);
    const int classified = model->classify(feats, n);
    p.order = order;
    p.classified = classified;
    p.candidates = model->candidates();
  } catch (const Error& e) {  // a model that loads but cannot answer (its boosters disagree)
    p.why_not = std::string("the row-order model cannot predict: ") + e.what();
    return fall_back();
  }
  p.by = "the row-order model (" + arch + ")";
  p.why_not.clear();
  p.pick_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return p;
}

RowOrderPick place_row_order_seed(std::vector<graph::Graph>& seeds, const graph::Graph& row_kernel,
                                  const Csr64& a, std::int64_t n, bool learned,
                                  const std::string& models_dir, const std::string& arch) {
  const auto p = predict_row_order(a, n, learned, models_dir, arch);
  graph::Graph g = graph::with_row_order(row_kernel, p.order, p.candidates);
  std::erase_if(seeds, [&](const graph::Graph& s) { return s.name == g.name; });
  seeds.insert(seeds.begin(), std::move(g));
  return p;
}

}  // namespace sparsetune::search
