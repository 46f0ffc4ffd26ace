// Training of the SpMV and SpMM ranking models (models/spmv_ranker.hpp) from a tuning database:
// per op, a regression of log(time / the matrix's fastest measured time) that ranks, and one of
// log(fastest / floor) over the matrix's inputs that puts the ranking's times on the clock; the
// SpMM ones with log2(n) among their inputs.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include "core/error.hpp"
#include "core/version.hpp"
#include "models/model_file.hpp"
#include "models/predictors.hpp"
#include "models/rank_score.hpp"
#include "models/spmv_rank_features.hpp"
#include "models/spmv_ranker.hpp"
#include "models/training_set.hpp"

namespace sparsetune::models {

namespace {

using nlohmann::json;

struct Table {
  std::vector<std::vector<std::vector<double>>> x;  // per matrix, per sample
  std::vector<std::vector<double>> y;               // log(time / fastest of the matrix)
  std::vector<std::vector<double>> base;            // per matrix: its inputs alone
  std::vector<double> level;                        // per matrix: log(fastest / floor)
};

Table build_table(const TrainingSet& t, bool spmm) {
  Table tab;
  for (const auto& m : t.matrices) {
    const auto base = spmm ? spmm_rank_matrix_part(m.features, m.dtype, m.n, m.name)
                           : spmv_rank_matrix_part(m.features, m.dtype, m.name);
    const double floor = spmm ? spmm_floor_us(m.rows, m.cols, m.nnz, m.n, m.dtype)
                              : spmv_floor_us(m.rows, m.cols, m.nnz, m.dtype);
    auto& xs = tab.x.emplace_back();
    auto& ys = tab.y.emplace_back();
    for (const auto& s : m.samples) {
      xs.push_back(base);
      append_graph_part(xs.back(), s.graph);
      ys.push_back(std::log(s.time_us / floor));
    }
    // Each matrix's targets are taken relative to its fastest candidate: what sets a matrix's
    // distance from the floor is learnt once per matrix, by the level regression.
    const double fastest = ys.empty() ? 0.0 : *std::min_element(ys.begin(), ys.end());
    for (double& y : ys) y -= fastest;
    tab.base.push_back(base);
    tab.level.push_back(fastest);
  }
  return tab;
}

// Fits on the matrices `which`; every matrix weighs the same whatever its number of candidates.
XgbRegressor fit(const Table& tab, const std::vector<std::size_t>& which, const XgbOptions& o) {
  std::vector<std::vector<double>> x;
  std::vector<double> y, w;
  std::size_t rows = 0;
  for (std::size_t m : which) rows += tab.x[m].size();
  const double mean = static_cast<double>(rows) / static_cast<double>(which.size());
  for (std::size_t m : which) {
    const double weight = mean / static_cast<double>(tab.x[m].size());
    for (std::size_t j = 0; j < tab.x[m].size(); ++j) {
      x.push_back(tab.x[m][j]);
      y.push_back(tab.y[m][j]);
      w.push_back(weight);
    }
  }
  XgbRegressor r(o);
  r.fit(x, y, w);
  return r;
}

// The level regression's inputs: a row per matrix of `which`, its inputs alone.
std::vector<std::vector<double>> level_rows(const Table& tab,
                                            const std::vector<std::size_t>& which) {
  std::vector<std::vector<double>> x;
  for (std::size_t m : which) x.push_back(tab.base[m]);
  return x;
}

// The level regression on the matrices `which`.
XgbRegressor fit_level(const Table& tab, const std::vector<std::size_t>& which,
                       const XgbOptions& o) {
  std::vector<double> y;
  for (std::size_t m : which) y.push_back(tab.level[m]);
  XgbRegressor r(o);
  r.fit(level_rows(tab, which), y, std::vector<double>(which.size(), 1.0));
  return r;
}

// Mean squared error of the level regression on the matrices `which`.
double level_mse(const Table& tab, const std::vector<std::size_t>& which, const XgbRegressor& r) {
  if (which.empty()) return 0.0;
  const auto p = r.predict(level_rows(tab, which));
  double se = 0;
  for (std::size_t k = 0; k < which.size(); ++k) {
    const double d = p[k] - tab.level[which[k]];
    se += d * d;
  }
  return se / static_cast<double>(which.size());
}

struct Scored {
  RankingScore ranking;
  double mse = 0;  // of the target, over the rows
};

// With `as_cost_model`, only the candidates the cost model had ranked are ranked (its picks and
// the model's are then made from the same candidates).
Scored score(const TrainingSet& t, const Table& tab, const std::vector<std::size_t>& which,
             const XgbRegressor& r, bool as_cost_model = false) {
  Scored s;
  std::vector<std::vector<double>> predicted;
  double se = 0;
  std::size_t n = 0;
  for (std::size_t m : which) {
    predicted.push_back(r.predict(tab.x[m]));
    if (as_cost_model)
      for (std::size_t j = 0; j < t.matrices[m].samples.size(); ++j)
        if (!(t.matrices[m].samples[j].cost_model_us > 0)) predicted.back()[j] = std::nan("");
    for (std::size_t j = 0; j < tab.y[m].size(); ++j) {
      if (std::isnan(predicted.back()[j])) continue;
      const double d = predicted.back()[j] - tab.y[m][j];
      se += d * d;
      ++n;
    }
  }
  s.ranking = score_picks(t, which, predicted);
  s.mse = n ? se / static_cast<double>(n) : 0.0;
  return s;
}

// The cost model's picks on the same matrices, where it had ranked measured candidates.
RankingScore cost_model_picks(const TrainingSet& t, const std::vector<std::size_t>& which) {
  std::vector<std::vector<double>> predicted;
  for (std::size_t m : which) {
    auto& p = predicted.emplace_back();
    for (const auto& s : t.matrices[m].samples)
      p.push_back(s.cost_model_us > 0 ? s.cost_model_us : std::nan(""));
  }
  return score_picks(t, which, predicted);
}

// The mean of `bag` fits, under the seeds o.seed, o.seed + 1, ...: a model's pick is the argmin of
// 64 predictions, so its variance from one seed to the next is what the worst matrix sees.
template <typename Fit>
XgbRegressor bagged(int bag, XgbOptions o, const Fit& fit_one) {
  std::vector<XgbRegressor> members;
  const auto first = o.seed;
  for (int k = 0; k < bag; ++k) {
    o.seed = first + static_cast<std::uint64_t>(k);
    members.push_back(fit_one(o));
  }
  return members.size() == 1 ? std::move(members.front()) : XgbRegressor::average(members);
}

json options_json(const XgbOptions& o, int bag = 1) {
  return {{"rounds", o.rounds},
          {"bag", bag},
          {"max_depth", o.max_depth},
          {"eta", o.eta},
          {"min_child_weight", o.min_child_weight},
          {"subsample", o.subsample},
          {"colsample_bytree", o.colsample},
          {"seed", o.seed}};
}

json summary(const Scored& s) {
  return {{"mse", s.mse},
          {"top1_accuracy", s.ranking.top1},
          {"geomean_share_of_oracle", s.ranking.geomean_share},
          {"min_share_of_oracle", s.ranking.min_share},
          {"matrices", s.ranking.matrices.size()}};
}

TrainResult train_rank(const db::TuningDb& db, const TrainOptions& opt, bool spmm) {
  const char* name = spmm ? kSpmmRankName : kSpmvRankName;
  // A database may hold one op only: train --model all then skips the other's ranking.
  const TrainingSet t = spmm ? read_spmm_training_set(db, opt.arch, true)
                             : read_spmv_training_set(db, opt.arch, true);
  if (t.matrices.empty())
    throw NothingToLearn((opt.database.empty() ? db.path() : opt.database) + ": no measured " +
                         (spmm ? "SpMM" : "SpMV") +
                         " operator graph with its matrix's features (collect --op " +
                         (spmm ? "spmm" : "spmv") + " measures them)");
  const Table tab = build_table(t, spmm);

  // The split's unit is the matrix: its rows of every value type and device go one way.
  std::vector<SplitItem> items;
  std::map<std::string, std::size_t> item_of;
  for (const auto& m : t.matrices) {
    if (item_of.count(m.fingerprint)) continue;
    item_of[m.fingerprint] = items.size();
    std::string family = m.family;
    if (family.empty())
      family = m.features.value("alphasparse.irregular", 0.0) > 0 ? "irregular" : "regular";
    items.push_back({m.fingerprint, m.nnz, family, m.matrix});  // split.test lists names
  }
  if (items.size() < 3)
    throw Error(db.path() + ": " + std::to_string(items.size()) +
                " matrices with measured candidates: training needs at least 3");
  const MatrixSplit split = split_matrices(items, opt.split);
  std::vector<std::size_t> train, test;
  for (std::size_t m = 0; m < t.matrices.size(); ++m)
    (split.test[item_of[t.matrices[m].fingerprint]] ? test : train).push_back(m);

  // Cross-validation on the training part chooses among a few settings: folds of matrices.
  std::vector<XgbOptions> settings;
  for (const auto& [rounds, depth, eta] :
       {std::tuple{300, 6, 0.05}, std::tuple{200, 4, 0.1}, std::tuple{400, 8, 0.03}}) {
    XgbOptions o;
    o.rounds = rounds;
    o.max_depth = depth;
    o.eta = eta;
    o.min_child_weight = 2.0;
    o.subsample = 0.8;
    o.colsample = 0.6;
    o.seed = opt.split.seed;
    o.threads = opt.threads;
    settings.push_back(o);
  }
  int folds = 0;
  for (std::size_t m : train)
    folds = std::max(folds, split.fold[item_of[t.matrices[m].fingerprint]] + 1);
  json cv = json::array();
  std::size_t chosen = 0;
  double chosen_share = -1, chosen_mse = 0;
  for (std::size_t k = 0; k < settings.size(); ++k) {
    double log_share = 0, mse = 0;
    int scored = 0;
    json per_fold = json::array();
    for (int f = 0; f < folds && folds >= 2; ++f) {
      std::vector<std::size_t> fit_on, held;
      for (std::size_t m : train)
        (split.fold[item_of[t.matrices[m].fingerprint]] == f ? held : fit_on).push_back(m);
      if (fit_on.empty() || held.empty()) continue;
      const auto s = score(t, tab, held, fit(tab, fit_on, settings[k]));
      per_fold.push_back(summary(s));
      log_share +=
          std::log(s.ranking.geomean_share) * static_cast<double>(s.ranking.matrices.size());
      mse += s.mse;
      scored += static_cast<int>(s.ranking.matrices.size());
    }
    const double share = scored ? std::exp(log_share / scored) : 0.0;
    const double mean_mse = per_fold.empty() ? 0.0 : mse / static_cast<double>(per_fold.size());
    cv.push_back({{"options", options_json(settings[k])},
                  {"geomean_share_of_oracle", share},
                  {"mean_mse", mean_mse},
                  {"folds", per_fold}});
    if (share > chosen_share + 1e-12 ||
        (std::abs(share - chosen_share) <= 1e-12 && mean_mse < chosen_mse))
      chosen = k, chosen_share = share, chosen_mse = mean_mse;
  }

  const int bag = std::max(opt.bag, 1);
  const XgbRegressor model =
      bagged(bag, settings[chosen], [&](const XgbOptions& o) { return fit(tab, train, o); });
  const XgbRegressor level =
      bagged(bag, settings[chosen], [&](const XgbOptions& o) { return fit_level(tab, train, o); });
  const Scored on_train = score(t, tab, train, model);
  const Scored on_test = score(t, tab, test, model);
  const RankingScore cost_test = cost_model_picks(t, test);
  const Scored same_test = score(t, tab, test, model, true);

  std::vector<std::string> test_names, devices = t.devices;
  std::set<std::string> seen;
  for (std::size_t m : test)  // by the database's names, each matrix once
    if (seen.insert(t.matrices[m].fingerprint).second) test_names.push_back(t.matrices[m].matrix);
  json split_json = split.description;
  split_json["test"] = test_names;

  ModelFile file;
  file.model = name;
  file.kind = kRelativeRankKind;
  file.target = std::string(
                    "booster: log(time_us / fastest_us), fastest_us = the fastest time measured "
                    "on the same matrix; level booster: log(fastest_us / floor_us) from the "
                    "matrix's inputs, floor_us = the fewest bytes an ") +
                (spmm ? "SpMM (CSR, B and C once)" : "SpMV") +
                " moves at 3000 GB/s; predicted time = floor_us * exp(level + booster); the "
                "lowest prediction ranks first";
  file.op = spmm ? "spmm" : "spmv";
  file.arch = t.arch;
  std::string device_list;
  for (const auto& d : devices) device_list += (device_list.empty() ? "" : ", ") + d;
  file.device = device_list;
  file.created = opt.created.empty() ? today_utc() : opt.created;
  file.tool_version = kVersion;
  file.features = spmm ? spmm_rank_feature_names() : spmv_rank_feature_names();
  file.booster = std::string(name) + ".xgb.ubj";
  file.training_set = {
      {"fingerprint", t.fingerprint},
      {"database",
       opt.database.empty() ? std::filesystem::path(db.path()).filename().string() : opt.database},
      {"matrices", train.size()},
      {"rows",
       [&] {
         std::size_t n = 0;
         for (std::size_t m : train) n += tab.y[m].size();
         return n;
       }()},
      {"all_matrices", t.matrices.size()},
      {"all_rows", t.rows}};
  // SpMM's rows are few and small: tune falls back to the cost model for a matrix far outside
  // the training matrices' sizes (SpmvRanker::outside_training).
  if (spmm) {
    std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = 0;
    for (std::size_t m : train)
      lo = std::min(lo, t.matrices[m].nnz), hi = std::max(hi, t.matrices[m].nnz);
    file.training_set["nnz_min"] = lo;
    file.training_set["nnz_max"] = hi;
  }
  file.split = split_json;
  file.options = options_json(settings[chosen], bag);

  TrainResult r;
  r.model = name;
  r.report = {{"model", name},
              {"arch", t.arch},
              {"device", device_list},
              {"created", file.created},
              {"training_set", file.training_set},
              {"split", split_json},
              {"cross_validation", {{"settings", cv}, {"chosen", chosen}}},
              {"options", file.options},
              {"train", summary(on_train)},
              {"test", summary(on_test)},
              {"level_mse",
               {{"train", level_mse(tab, train, level)}, {"test", level_mse(tab, test, level)}}},
              {"test_per_matrix", on_test.ranking.to_json()["per_matrix"]},
              {"cost_model_test", cost_test.to_json()},
              {"test_on_cost_model_candidates", summary(same_test)},
              {"skipped", t.skipped}};
  r.report["cost_model_test"].erase("per_matrix");
  if (!opt.out_dir.empty()) {
    const auto dir = arch_dir(opt.out_dir, t.arch);
    const std::string report_name = std::string(name) + ".report.json";
    r.report["files"] = json::array();
    r.files = write_model(dir, file, model, {{report_name, r.report.dump(2) + "\n"}}, &level);
    r.report["files"] = r.files;
  }
  return r;
}

}  // namespace

TrainResult train_spmv_rank(const db::TuningDb& db, const TrainOptions& opt) {
  return train_rank(db, opt, false);
}

TrainResult train_spmm_rank(const db::TuningDb& db, const TrainOptions& opt) {
  return train_rank(db, opt, true);
}

}  // namespace sparsetune::models
