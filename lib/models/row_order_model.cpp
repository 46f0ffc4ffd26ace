#include "models/row_order_model.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

#include "core/error.hpp"
#include "core/row_orders.hpp"
#include "features/matrix_features.hpp"
#include "io/file_bytes.hpp"
#include "models/predictors.hpp"
#include "models/matrix_split.hpp"
#include "models/xgb_classifier.hpp"

namespace sparsetune::models {

namespace {

std::size_t order_count() { return row_orders::all_orders().size(); }
std::string order_name(std::size_t k) { return row_orders::name(row_orders::all_orders()[k]); }

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0.0 : s / static_cast<double>(v.size());
}

double geomean(const std::vector<double>& v) {
  if (v.empty()) return 0.0;
  double s = 0;
  for (double x : v) s += std::log(x);
  return std::exp(s / static_cast<double>(v.size()));
}

}  // namespace

double order_time_us(const RowOrderRecord& r, int order) {
  return r.time_us[order] > 0 ? r.time_us[order] : r.time_us[0];
}

bool usable_record(const RowOrderRecord& r) {
  return r.time_us.size() == order_count() && r.time_us[0] > 0 &&
         r.features.size() == row_order_feature_names().size();
}

std::vector<std::string> row_order_feature_names() {
  static const std::vector<std::string> names = features::feature_names(features::kPermutation);
  return names;
}

std::vector<std::string> row_order_model_inputs() {
  auto v = row_order_feature_names();
  v.push_back("log2_n");
  return v;
}

std::vector<double> row_order_inputs(const std::vector<double>& features, std::int64_t n) {
  if (features.size() != row_order_feature_names().size())
    throw Error("row-order model: " + std::to_string(features.size()) + " features given, " +
                std::to_string(row_order_feature_names().size()) + " expected");
  auto x = features;
  x.push_back(std::log2(static_cast<double>(std::max<std::int64_t>(n, 1))));
  return x;
}

int best_order(const RowOrderRecord& r) {
  int best = -1;
  for (std::size_t k = 0; k < r.time_us.size(); ++k)
    if (r.time_us[k] > 0 && (best < 0 || r.time_us[k] < r.time_us[best]))
      best = static_cast<int>(k);
  return best;
}

std::vector<int> greedy_order_classes(const std::vector<const RowOrderRecord*>& records,
                                      int classes, std::vector<double>* oracle) {
  const auto count = static_cast<int>(order_count());
  const int want = classes <= 0 ? count : std::min(classes, count);
  std::vector<int> chosen = {0};
  // Each record's best time within the chosen orders so far.
  std::vector<double> best(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) best[i] = records[i]->time_us[0];
  auto score = [&](int extra) {
    double s = 0;
    for (std::size_t i = 0; i < records.size(); ++i) {
      const double t = extra < 0 ? best[i] : std::min(best[i], order_time_us(*records[i], extra));
      s += std::log(records[i]->time_us[0] / t);
    }
    return records.empty() ? 1.0 : std::exp(s / static_cast<double>(records.size()));
  };
  if (oracle) *oracle = {score(-1)};
  while (static_cast<int>(chosen.size()) < want) {
    int pick = -1;
    double top = 0;
    for (int k = 1; k < count; ++k)
      if (std::find(chosen.begin(), chosen.end(), k) == chosen.end()) {
        const double v = score(k);
        if (pick < 0 || v > top) pick = k, top = v;
      }
    chosen.push_back(pick);
    for (std::size_t i = 0; i < records.size(); ++i)
      best[i] = std::min(best[i], order_time_us(*records[i], pick));
    if (oracle) oracle->push_back(top);
  }
  return chosen;
}

namespace {

// The geometric mean over `records` of t_original / the best time among `orders`.
double oracle_of(const std::vector<const RowOrderRecord*>& records,
                 const std::vector<int>& orders) {
  double s = 0;
  for (const auto* r : records) {
    double best = r->time_us[0];
    for (int k : orders) best = std::min(best, order_time_us(*r, k));
    s += std::log(r->time_us[0] / best);
  }
  return records.empty() ? 1.0 : std::exp(s / static_cast<double>(records.size()));
}

// The baseline a pick must beat: per N, the order with the best geometric-mean speed-up over
// `records` at that N.
std::map<std::int64_t, int> fixed_order_per_n(const std::vector<const RowOrderRecord*>& records) {
  std::map<std::int64_t, std::vector<double>> sum;
  for (const auto* r : records) {
    auto& v = sum[r->n];
    v.resize(order_count(), 0.0);
    for (std::size_t k = 0; k < order_count(); ++k)
      v[k] += std::log(r->time_us[0] / order_time_us(*r, static_cast<int>(k)));
  }
  std::map<std::int64_t, int> out;
  for (const auto& [n, v] : sum)
    out[n] = static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin());
  return out;
}

// Its order at n: that of the nearest N in log2 (the lower on a tie); the original without any.
int fixed_order_at(const std::map<std::int64_t, int>& fixed, std::int64_t n) {
  if (fixed.empty()) return 0;
  const auto it = fixed.lower_bound(n);
  if (it == fixed.end()) return std::prev(it)->second;
  if (it == fixed.begin() || it->first == n) return it->second;
  const auto lo = std::prev(it);
  const double x = std::log2(static_cast<double>(n));
  return x - std::log2(static_cast<double>(lo->first)) <=
                 std::log2(static_cast<double>(it->first)) - x
             ? lo->second
             : it->second;
}

}  // namespace

RowOrderModel RowOrderModel::fit(const std::vector<const RowOrderRecord*>& train,
                                 const RowOrderTrainOptions& o, int rounds, bool classifier,
                                 nlohmann::json* why) {
  // The classes: every order, or the greedy few of the paper's Fig. 10. A record's best is its
  // fastest among them.
  std::vector<double> class_oracle;
  auto classes = greedy_order_classes(train, o.classes, &class_oracle);
  // The best fixed order of each N joins them: with its prior, the model starts from the
  // baseline it has to beat, and the boosting can only move it from there.
  for (const auto& [n, k] : fixed_order_per_n(train))
    if (std::find(classes.begin(), classes.end(), k) == classes.end()) {
      classes.push_back(k);
      class_oracle.push_back(oracle_of(train, classes));
    }
  std::vector<char> is_class(order_count(), 0);
  for (int k : classes) is_class[k] = 1;
  auto best_class = [&](const RowOrderRecord& r) {  // ties (equal orders) to the first
    int b = 0;
    for (std::size_t k = 1; k < order_count(); ++k)
      if (is_class[k] && r.time_us[k] > 0 && r.time_us[k] < r.time_us[b]) b = static_cast<int>(k);
    return b;
  };
  // Class weights: inverse to the frequency of each sample's best order among the training
  // samples, scaled so they average 1.
  std::vector<int> best_count(order_count(), 0);
  for (const auto* r : train) ++best_count[best_class(*r)];
  std::vector<double> class_weight(order_count(), 0.0);
  int classes_seen = 0;
  for (int c : best_count) classes_seen += c > 0;
  for (std::size_t k = 0; k < order_count(); ++k)
    if (best_count[k] > 0)
      class_weight[k] = o.class_weights ? static_cast<double>(train.size()) /
                                              (classes_seen * static_cast<double>(best_count[k]))
                                        : 1.0;

  RowOrderModel m;
  m.regressors_.resize(order_count());
  m.priors_.resize(order_count());
  // The original order is the scale (its ratio is 0): no prior, no regressor.
  for (std::size_t k = 1; k < order_count(); ++k) {
    if (!is_class[k]) continue;  // never picked
    if (o.priors) {
      std::map<std::int64_t, std::pair<double, int>> sum;
      for (const auto* r : train)
        if (r->time_us[k] > 0) {
          auto& [s, c] = sum[r->n];
          s += std::log(r->time_us[k] / r->time_us[0]);
          ++c;
        }
      for (const auto& [n, sc] : sum)
        m.priors_[k].push_back({std::log2(static_cast<double>(n)), sc.first / sc.second});
    }
    if (rounds == 0) continue;  // the priors alone
    std::vector<std::vector<double>> x;
    std::vector<double> y, w;
    for (const auto* r : train)
      if (r->time_us[k] > 0) {
        x.push_back(row_order_inputs(r->features, r->n));
        y.push_back(std::log(r->time_us[k] / r->time_us[0]) - m.prior(k, r->n));
        w.push_back(class_weight[best_class(*r)]);
      }
    if (x.empty()) continue;  // never measured: never predicted
    XgbOptions xo = o.xgb;
    xo.rounds = rounds;
    if (o.priors) xo.base_score = 0.0;  // the prior is the start
    XgbRegressor reg(xo);
    reg.fit(x, y, w);
    m.regressors_[k] = std::move(reg);
  }
  // The direct classifier over the orders that were ever best.
  for (std::size_t k = 0; k < order_count(); ++k)
    if (best_count[k] > 0) m.classifier_orders_.push_back(static_cast<int>(k));
  if (classifier && m.classifier_orders_.size() >= 2) {
    std::vector<std::vector<double>> x;
    std::vector<int> y;
    std::vector<double> w;
    for (const auto* r : train) {
      const int b = best_class(*r);
      x.push_back(row_order_inputs(r->features, r->n));
      y.push_back(
          static_cast<int>(std::find(m.classifier_orders_.begin(), m.classifier_orders_.end(), b) -
                           m.classifier_orders_.begin()));
      w.push_back(class_weight[b]);
    }
    // The comparison classifier keeps its own rounds whatever the regressions are given.
    XgbOptions co = o.xgb;
    co.rounds = RowOrderTrainOptions{}.xgb.rounds;
    XgbClassifier cls(static_cast<int>(m.classifier_orders_.size()), co);
    cls.fit(x, y, w);
    m.classifier_.emplace(std::move(cls));
  }
  if (why) {
    nlohmann::json counts = nlohmann::json::object();
    for (std::size_t k = 0; k < order_count(); ++k) counts[order_name(k)] = best_count[k];
    nlohmann::json cj = nlohmann::json::array();
    for (std::size_t i = 0; i < classes.size(); ++i)
      cj.push_back({{"order", order_name(static_cast<std::size_t>(classes[i]))},
                    {"train_oracle_speedup", class_oracle[i]}});
    *why = {{"best_order_counts_train", counts}, {"classes", cj}};
  }
  return m;
}

RowOrderModel RowOrderModel::train(const std::vector<RowOrderRecord>& all,
                                   const RowOrderTrainOptions& o, nlohmann::json* report) {
  std::vector<RowOrderRecord> records;
  for (const auto& r : all)
    if (usable_record(r)) records.push_back(r);
  // Matrices, not records, are split: both N of a matrix fall on one side.
  std::map<std::string, std::int64_t> nnz_of;
  for (const auto& r : records) nnz_of[r.matrix] = r.nnz;
  if (nnz_of.size() < 4)
    throw NothingToLearn("row-order training: " + std::to_string(nnz_of.size()) +
                         " matrices with the original order measured; at least 4 are needed");

  SplitOptions so;
  so.test_fraction = o.test_fraction;
  so.seed = o.seed;
  so.held_out = o.held_out;
  so.held_out_from = o.held_out_from;
  const bool select_rounds = o.inner_folds >= 2 && !o.rounds_grid.empty();
  if (select_rounds) so.folds = o.inner_folds;  // the split deals the training matrices into them
  auto [split, is_test] = hold_out(nnz_of, so);

  std::vector<const RowOrderRecord*> train, test;
  for (const auto& r : records) (is_test[r.matrix] ? test : train).push_back(&r);

  // The boosting rounds, by cross-validation over the training matrices.
  int rounds = o.xgb.rounds;
  nlohmann::json selection;
  if (select_rounds) {
    std::map<std::string, int> fold_of;  // hold_out's items are nnz_of's keys, in order
    std::size_t item = 0;
    for (const auto& [name, nnz] : nnz_of) fold_of[name] = split.fold[item++];
    std::vector<double> gain(o.rounds_grid.size(), 0.0);
    double oracle = 0;
    for (int f = 0; f < o.inner_folds; ++f) {
      std::vector<const RowOrderRecord*> in, out;
      for (const auto* r : train) (fold_of.at(r->matrix) == f ? out : in).push_back(r);
      if (in.empty() || out.empty()) continue;
      for (const auto* r : out) oracle += std::log(r->time_us[0] / r->time_us[best_order(*r)]);
      for (std::size_t g = 0; g < o.rounds_grid.size(); ++g) {
        const auto m = fit(in, o, o.rounds_grid[g], false, nullptr);
        for (const auto* r : out)
          gain[g] += std::log(r->time_us[0] / order_time_us(*r, m.predict(r->features, r->n)));
      }
    }
    std::size_t pick = 0;
    for (std::size_t g = 1; g < gain.size(); ++g)
      if (gain[g] > gain[pick] + 1e-12) pick = g;
    rounds = o.rounds_grid[pick];
    nlohmann::json shares = nlohmann::json::object();
    for (std::size_t g = 0; g < gain.size(); ++g)
      shares[std::to_string(o.rounds_grid[g])] = oracle > 0 ? gain[g] / oracle : 0.0;
    selection = {{"inner_folds", o.inner_folds},
                 {"share_of_oracle_log_gain_by_rounds", shares},
                 {"rounds", rounds}};
  }
  nlohmann::json why;
  RowOrderModel m = fit(train, o, rounds, true, &why);
  const auto fixed_per_n = fixed_order_per_n(train);
  auto fixed_pick = [&](std::int64_t n) { return fixed_order_at(fixed_per_n, n); };

  // Evaluation: speed-ups over the original order, geometric means over the records.
  auto evaluate = [&](const std::vector<const RowOrderRecord*>& set) {
    std::vector<double> oracle, picked, classified, fixed;
    // Each record's share of the oracle's performance, t_best / t_pick (§V-D's "within 3.8 % of
    // oracular performance" is 1 minus its mean).
    std::vector<double> picked_perf, classified_perf;
    std::vector<std::vector<double>> per_order(order_count());
    int exact = 0, within10 = 0, within4 = 0, class_exact = 0;
    nlohmann::json rows = nlohmann::json::array();
    for (const auto* r : set) {
      const int best = best_order(*r), pick = m.predict(r->features, r->n);
      const int cls = m.classify(r->features, r->n);
      const double t0 = r->time_us[0], tb = r->time_us[best];
      oracle.push_back(t0 / tb);
      picked.push_back(t0 / order_time_us(*r, pick));
      classified.push_back(t0 / order_time_us(*r, cls));
      fixed.push_back(t0 / order_time_us(*r, fixed_pick(r->n)));
      for (std::size_t k = 0; k < order_count(); ++k)
        per_order[k].push_back(t0 / order_time_us(*r, static_cast<int>(k)));
      exact += pick == best;
      class_exact += cls == best;
      within10 += order_time_us(*r, pick) <= 1.1 * tb;
      within4 += order_time_us(*r, pick) <= 1.04 * tb;
      picked_perf.push_back(tb / order_time_us(*r, pick));
      classified_perf.push_back(tb / order_time_us(*r, cls));
      rows.push_back({{"matrix", r->matrix},
                      {"n", r->n},
                      {"nnz", r->nnz},
                      {"best", order_name(best)},
                      {"predicted", order_name(pick)},
                      {"classified", order_name(cls)},
                      {"original_us", t0},
                      {"best_us", tb},
                      {"predicted_us", order_time_us(*r, pick)},
                      {"classified_us", order_time_us(*r, cls)}});
    }
    const double go = geomean(oracle), gp = geomean(picked), gc = geomean(classified),
                 gf = geomean(fixed);
    nlohmann::json fixed_json = nlohmann::json::object();
    for (std::size_t k = 0; k < order_count(); ++k)
      fixed_json[order_name(k)] = geomean(per_order[k]);
    auto gain_share = [go](double g) { return go > 1.0 ? (g - 1.0) / (go - 1.0) : 1.0; };
    // The paper's figures are arithmetic means: of the speed-ups ("1.4x on average") and of each
    // matrix's share of the oracle's performance ("within 3.8% of oracular performance", the
    // 96 %); both are reported beside the geometric ones and the share of the gain.
    const double mo = mean(oracle), mp = mean(picked), mc = mean(classified);
    auto mean_gain_share = [mo](double g) { return mo > 1.0 ? (g - 1.0) / (mo - 1.0) : 1.0; };
    const auto n = static_cast<double>(std::max<std::size_t>(set.size(), 1));
    return nlohmann::json{{"records", set.size()},
                          {"oracle_speedup", go},
                          {"predicted_speedup", gp},
                          {"classified_speedup", gc},
                          {"predicted_share_of_oracle", go > 0 ? gp / go : 0.0},
                          {"classified_share_of_oracle", go > 0 ? gc / go : 0.0},
                          {"predicted_share_of_oracle_gain", gain_share(gp)},
                          {"classified_share_of_oracle_gain", gain_share(gc)},
                          {"fixed_per_n_speedup", gf},
                          {"fixed_per_n_share_of_oracle_gain", gain_share(gf)},
                          {"oracle_speedup_mean", mo},
                          {"predicted_speedup_mean", mp},
                          {"classified_speedup_mean", mc},
                          {"predicted_share_of_oracle_gain_mean", mean_gain_share(mp)},
                          {"classified_share_of_oracle_gain_mean", mean_gain_share(mc)},
                          {"predicted_exact", exact / n},
                          {"classified_exact", class_exact / n},
                          {"predicted_within_10pct", within10 / n},
                          {"predicted_within_4pct", within4 / n},
                          {"predicted_share_of_oracle_performance_mean", mean(picked_perf)},
                          {"classified_share_of_oracle_performance_mean", mean(classified_perf)},
                          {"each_order_speedup", fixed_json},
                          {"rows", rows}};
  };
  std::vector<std::string> test_names;
  for (const auto& [name, t] : is_test)
    if (t) test_names.push_back(name);
  m.file_.model = kRowOrderName;
  m.file_.kind = "xgboost-regressor-per-order";
  m.file_.target = o.priors ? "log(time / the original order's time), one regressor per order, "
                              "from its mean at each N (priors)"
                            : "log(time / the original order's time), one regressor per order";
  m.file_.op = "spmm";
  m.file_.features = row_order_model_inputs();
  m.file_.booster = std::string(kRowOrderName) + ".xgb.json";
  m.file_.training_set = {{"records", records.size()},
                          {"matrices", nnz_of.size()},
                          {"train_records", train.size()},
                          {"test_records", test.size()},
                          {"best_order_counts_train", why["best_order_counts_train"]},
                          {"class_weights", o.class_weights}};
  {
    // The classes and, as in the paper's Fig. 10, the training records' oracle as each joins.
    m.file_.training_set["classes"] = why["classes"];
    if (!selection.is_null()) m.file_.training_set["rounds_selection"] = selection;
    nlohmann::json fj = nlohmann::json::object();
    for (const auto& [n, k] : fixed_per_n)
      fj[std::to_string(n)] = order_name(static_cast<std::size_t>(k));
    m.file_.training_set["fixed_order_per_n"] = fj;
  }
  m.file_.split = split.description;
  m.file_.split["test"] = test_names;
  // The rule the Hamming orders' times were taken under: tune builds the pick under the same.
  const auto rule = records.empty() ? row_orders::Candidates::matrix : records.front().candidates;
  m.file_.options = {{"candidates", row_orders::name(rule)},
                     {"test_fraction", o.test_fraction},
                     {"seed", o.seed},
                     {"classes", o.classes},
                     {"priors", o.priors},
                     {"rounds", rounds},
                     {"max_depth", o.xgb.max_depth},
                     {"eta", o.xgb.eta}};
  if (report) {
    *report = {{"split", m.file_.split},
               {"training_set", m.file_.training_set},
               {"train", evaluate(train)},
               {"test", evaluate(test)}};
    m.file_.training_set["test_figures"] = (*report)["test"];
    m.file_.training_set["test_figures"].erase("rows");
  }
  return m;
}

std::vector<double> RowOrderModel::predict_log_ratio(const std::vector<double>& features,
                                                     std::int64_t n) const {
  const auto x = row_order_inputs(features, n);
  std::vector<double> out(order_count(), std::numeric_limits<double>::infinity());
  out[0] = 0.0;  // the original order against itself
  for (std::size_t k = 1; k < order_count(); ++k) {
    // A class has a regressor, a prior or both (0 rounds: the prior alone); others are never
    // picked.
    const bool fitted = regressors_[k].fitted();
    if (!fitted && (k >= priors_.size() || priors_[k].empty())) continue;
    out[k] = prior(k, n) + (fitted ? regressors_[k].predict({x})[0] : 0.0);
  }
  return out;
}

double RowOrderModel::prior(std::size_t order, std::int64_t n) const {
  if (order >= priors_.size() || priors_[order].empty()) return 0.0;
  const auto& p = priors_[order];  // ascending in log2 N
  const double x = std::log2(static_cast<double>(std::max<std::int64_t>(n, 1)));
  if (x <= p.front().first) return p.front().second;
  if (x >= p.back().first) return p.back().second;
  for (std::size_t i = 1; i < p.size(); ++i)
    if (x <= p[i].first) {
      const double t = (x - p[i - 1].first) / (p[i].first - p[i - 1].first);
      return p[i - 1].second + t * (p[i].second - p[i - 1].second);
    }
  return p.back().second;
}

int RowOrderModel::predict(const std::vector<double>& features, std::int64_t n) const {
  const auto p = predict_log_ratio(features, n);
  return static_cast<int>(std::min_element(p.begin(), p.end()) - p.begin());
}

row_orders::Candidates RowOrderModel::candidates() const {
  // Models written before the rule was recorded learned the matrix rule's times.
  return row_orders::parse_candidates(file_.options.value("candidates", std::string("matrix")));
}

int RowOrderModel::classify(const std::vector<double>& features, std::int64_t n) const {
  if (!classifier_) return classifier_orders_.empty() ? 0 : classifier_orders_[0];
  const auto x = row_order_inputs(features, n);
  return classifier_orders_.at(static_cast<std::size_t>(classifier_->predict({x})[0]));
}

std::vector<std::string> RowOrderModel::write(const std::string& dir, ModelFile file) const {
  file.model = kRowOrderName;
  file.kind = file_.kind;
  file.target = file_.target;
  file.op = file_.op;
  file.features = file_.features;
  file.booster = file_.booster;
  file.training_set = file_.training_set;
  file.split = file_.split;
  file.options = file_.options;
  nlohmann::json boosters = {{"orders", nlohmann::json::array()},
                             {"regressors", nlohmann::json::object()}};
  for (std::size_t k = 0; k < order_count(); ++k) {
    boosters["orders"].push_back(order_name(k));
    if (regressors_[k].fitted())
      boosters["regressors"][order_name(k)] = nlohmann::json::parse(regressors_[k].save());
  }
  nlohmann::json priors = nlohmann::json::object();
  for (std::size_t k = 0; k < priors_.size(); ++k)
    if (!priors_[k].empty()) {
      auto& p = priors[order_name(k)] = nlohmann::json::array();
      for (const auto& [x, v] : priors_[k]) p.push_back({x, v});
    }
  if (!priors.empty()) boosters["priors"] = priors;
  if (classifier_) {
    nlohmann::json orders = nlohmann::json::array();
    for (int k : classifier_orders_) orders.push_back(order_name(static_cast<std::size_t>(k)));
    boosters["classifier"] = {{"orders", orders},
                              {"model", nlohmann::json::parse(classifier_->save())}};
  }
  return write_model_files(dir, file, boosters.dump() + "\n");
}

RowOrderModel RowOrderModel::read(const std::string& description_path) {
  RowOrderModel m;
  m.file_ = read_model_file(description_path);
  if (const auto why = stale_reason(m.file_, kRowOrderName, row_order_model_inputs()); !why.empty())
    throw Error(description_path + ": stale model: " + why);
  if (m.file_.kind != "xgboost-regressor-per-order")
    throw Error(description_path + ": field 'kind' must be \"xgboost-regressor-per-order\"");
  // The rule is read where it is used (candidates()); a file whose rule that cannot read is
  // refused here, by name, instead of failing the tune that asks.
  try {
    (void)m.candidates();
  } catch (const std::exception& e) {  // an unknown name (Error) or not a string (JSON's)
    throw Error(description_path + ": field 'options.candidates': " + e.what());
  }
  const auto path =
      (std::filesystem::path(description_path).parent_path() / m.file_.booster).string();
  const auto j = nlohmann::json::parse(io::read_file(path), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("orders") || !j["orders"].is_array() ||
      !j.contains("regressors") || !j["regressors"].is_object())
    throw Error(path + ": not a row-order booster file (fields 'orders' and 'regressors')");
  std::vector<std::string> names;
  for (std::size_t k = 0; k < order_count(); ++k) names.push_back(order_name(k));
  if (j["orders"] != nlohmann::json(names))
    throw Error(path + ": field 'orders' lists other orders than this program's (stale model)");
  const auto width = row_order_model_inputs().size();
  m.regressors_.resize(order_count());
  for (std::size_t k = 0; k < order_count(); ++k)
    if (j["regressors"].contains(names[k])) {
      m.regressors_[k] = XgbRegressor::load(j["regressors"][names[k]].dump(), width,
                                            path + ": regressor '" + names[k] + "'");
    }
  m.priors_.resize(order_count());
  if (j.contains("priors")) {
    const auto& p = j["priors"];
    auto bad = [&path](const std::string& why) {
      return Error(path + ": field 'priors' " + why + " (pairs of log2 N and a log ratio)");
    };
    if (!p.is_object()) throw bad("is not an object");
    for (const auto& [name, pairs] : p.items()) {
      const auto it = std::find(names.begin(), names.end(), name);
      if (it == names.end()) throw bad("names an unknown order '" + name + "'");
      if (!pairs.is_array()) throw bad("of '" + name + "' is not an array");
      auto& out = m.priors_[static_cast<std::size_t>(it - names.begin())];
      for (const auto& xy : pairs) {
        if (!xy.is_array() || xy.size() != 2 || !xy[0].is_number() || !xy[1].is_number())
          throw bad("of '" + name + "' holds " + xy.dump());
        out.push_back({xy[0].get<double>(), xy[1].get<double>()});
        if (out.size() > 1 && out[out.size() - 2].first >= out.back().first)
          throw bad("of '" + name + "' is not ascending in log2 N");
      }
    }
  }
  if (j.contains("classifier")) {
    const auto& c = j["classifier"];
    if (!c.is_object() || !c.contains("orders") || !c.contains("model") || !c["orders"].is_array())
      throw Error(path + ": field 'classifier' needs 'orders' and 'model'");
    for (const auto& o : c["orders"]) {
      const auto it =
          std::find(names.begin(), names.end(), o.is_string() ? o.get<std::string>() : "");
      if (it == names.end()) throw Error(path + ": classifier order " + o.dump() + " is unknown");
      m.classifier_orders_.push_back(static_cast<int>(it - names.begin()));
    }
    m.classifier_.emplace(XgbClassifier::load(c["model"].dump(),
                                              static_cast<int>(m.classifier_orders_.size()), width,
                                              path + ": classifier"));
  }
  return m;
}

std::optional<RowOrderModel> RowOrderModel::find(const std::string& dir, const std::string& arch,
                                                 std::string* why) {
  return find_model<RowOrderModel>(dir, arch, kRowOrderName, &RowOrderModel::read, why);
}

}  // namespace sparsetune::models
