#include "models/slice_training.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <set>

#include "core/error.hpp"
#include "core/sptv_matrix.hpp"
#include "io/slice_source.hpp"
#include "models/slice_selector.hpp"
#include "models/xgb_classifier.hpp"

namespace sparsetune::models {

std::vector<features::SliceInput> labelled_inputs(const std::vector<SliceLabel>& labels,
                                                  const std::string& base_dir) {
  // Inputs of every labelled slice, one tensor and mode at a time.
  std::map<std::pair<std::string, int>, std::map<std::int64_t, features::SliceInput>> inputs;
  for (const auto& l : labels) inputs[{l.tensor, l.mode}];
  for (auto& [key, by_slice] : inputs) {
    const auto path = std::filesystem::path(key.first).is_absolute()
                          ? std::filesystem::path(key.first)
                          : std::filesystem::path(base_dir) / key.first;
    const auto t = io::read_slice_source(path.string()).tensor;
    if (key.second < 0 || key.second >= t.order())
      throw Error(path.string() + ": mode " + std::to_string(key.second) + " is not a mode of it");
    for (auto& in : features::slice_inputs(sptv_matrix(t, key.second)))
      by_slice[in.slice] = std::move(in);
  }
  std::vector<features::SliceInput> out;
  for (const auto& l : labels) {
    const auto& by_slice = inputs.at({l.tensor, l.mode});
    const auto it = by_slice.find(l.slice);
    if (it == by_slice.end())
      throw Error("slice training: " + l.tensor + " mode " + std::to_string(l.mode) +
                  " has no non-empty slice " + std::to_string(l.slice));
    out.push_back(it->second);
  }
  return out;
}

std::string labelled_features_csv(const std::vector<SliceLabel>& labels,
                                  const std::string& base_dir) {
  const auto inputs = labelled_inputs(labels, base_dir);
  std::string out = "slice,density";
  const auto field = [&out](const std::string& text) { out.append(",").append(text); };
  const auto number = [&field](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.9g", v);
    field(b);
  };
  for (const auto& n : features::global_feature_names()) field(n);
  field("label");
  field("margin");
  for (const auto& name : slice_format_classes()) field(name + "_us");
  out.append("\n");
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const auto& l = labels[i];
    out.append(slice_key(l.tensor, l.mode, l.slice));
    number(inputs[i].density);
    for (double v : inputs[i].globals) number(v);
    field(slice_format_classes()[static_cast<std::size_t>(l.format)]);
    number(l.margin);
    for (double t : l.time_us) std::isfinite(t) ? number(t) : field("");
    out.append("\n");
  }
  return out;
}

nlohmann::json to_json(const SliceTrainingReport::ByTime& b) {
  return {{"fastest", b.fastest},
          {"within_5pct", b.within_5pct},
          {"slowdown", b.slowdown},
          {"decided", b.decided},
          {"decided_fastest", b.decided_fastest}};
}

SliceTrainingReport::ByTime judge_picks(const std::vector<const SliceLabel*>& labels,
                                        const std::vector<int>& picks) {
  if (labels.size() != picks.size()) throw Error("slice training: one pick per label");
  SliceTrainingReport::ByTime b;
  if (picks.empty()) return b;
  double log_sum = 0;
  for (std::size_t i = 0; i < picks.size(); ++i) {
    const double r = time_ratio(*labels[i], picks[i]);
    b.fastest += picks[i] == labels[i]->fastest;
    b.within_5pct += r <= 1.05;
    if (labels[i]->margin >= kDecidedMargin)
      ++b.decided, b.decided_fastest += picks[i] == labels[i]->fastest;
    // A format the collect did not time counts as twice the fastest.
    log_sum += std::log(std::isfinite(r) ? r : 2.0);
  }
  const auto n = static_cast<double>(picks.size());
  b.fastest /= n;
  b.within_5pct /= n;
  b.slowdown = std::exp(log_sum / n);
  if (b.decided > 0) b.decided_fastest /= static_cast<double>(b.decided);
  return b;
}

SliceEvalReport evaluate_slice_gcn(const std::vector<SliceLabel>& labels,
                                   const std::string& base_dir, double sparsity_threshold,
                                   const SliceGcn& model) {
  SliceEvalReport rep;
  rep.labelled = static_cast<int>(labels.size());
  const auto inputs = labelled_inputs(labels, base_dir);
  std::vector<const SliceLabel*> scored;
  std::vector<int> gcn, rule;
  int gcn_right = 0, rule_right = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (inputs[i].density >= sparsity_threshold) {
      ++rep.dense_excluded;
      continue;
    }
    scored.push_back(&labels[i]);
    auto lp = model.log_probs(inputs[i]);
    gcn.push_back(static_cast<int>(std::max_element(lp.begin(), lp.end()) - lp.begin()));
    rule.push_back(rule_format(inputs[i].globals, static_cast<double>(inputs[i].nonempty_rows)));
    gcn_right += gcn.back() == labels[i].format;
    rule_right += rule.back() == labels[i].format;
    rep.slices.push_back({&labels[i], gcn.back(), rule.back(), std::move(lp)});
  }
  rep.scored = static_cast<int>(scored.size());
  if (rep.scored == 0) return rep;
  rep.gcn_accuracy = static_cast<double>(gcn_right) / rep.scored;
  rep.rule_accuracy = static_cast<double>(rule_right) / rep.scored;
  rep.gcn_time = judge_picks(scored, gcn);
  rep.rule_time = judge_picks(scored, rule);
  return rep;
}

std::vector<double> soft_target(const SliceLabel& l, double margin, int classes) {
  std::vector<double> t(static_cast<std::size_t>(classes), 0.0);
  if (l.format < 0 || l.format >= classes) throw Error("slice training: bad label");
  if (!(margin > 0)) {
    t[static_cast<std::size_t>(l.format)] = 1.0;
    return t;
  }
  double sum = 0.0;
  for (int f = 0; f < classes && f < kSliceFormats; ++f) {
    const double r = time_ratio(l, f);
    if (!std::isfinite(r)) continue;
    t[static_cast<std::size_t>(f)] = std::exp(-std::log(r) / margin);
    sum += t[static_cast<std::size_t>(f)];
  }
  if (!(sum > 0)) throw Error("slice training: a labelled slice has no measured time");
  for (auto& v : t) v /= sum;
  return t;
}

SliceTrainingReport train_slice_gcn(const std::vector<SliceLabel>& labels,
                                    const std::string& base_dir, const SliceTrainingOptions& o,
                                    SliceGcn& model) {
  if (!(o.holdout >= 0 && o.holdout < 1)) throw Error("slice training: holdout must be in [0, 1)");
  SliceTrainingReport rep;
  rep.labelled = static_cast<int>(labels.size());
  rep.per_class.assign(o.shape.classes, 0);
  const auto inputs = labelled_inputs(labels, base_dir);
  std::vector<features::SliceInput> x;
  std::vector<int> y;
  std::vector<const SliceLabel*> lx;  // each x's label (its measured times)
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const auto& l = labels[i];
    if (inputs[i].density >= o.sparsity_threshold) {
      ++rep.dense_excluded;
      continue;
    }
    if (l.format < 0 || l.format >= o.shape.classes) throw Error("slice training: bad label");
    x.push_back(inputs[i]);
    y.push_back(l.format);
    lx.push_back(&l);
  }
  if (x.empty()) throw Error("slice training: no slice is left for stage 2 to learn from");
  // A deterministic held-out share.
  std::mt19937_64 rng(o.seed);
  std::vector<std::size_t> order(x.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  auto n_test = static_cast<std::size_t>(o.holdout * static_cast<double>(x.size()));
  if (o.folds > 1 && o.test_keys.empty()) {
    if (o.fold < 0 || o.fold >= o.folds) throw Error("slice training: fold must be in [0, folds)");
    const std::size_t lo = order.size() * static_cast<std::size_t>(o.fold) / o.folds,
                      hi = order.size() * static_cast<std::size_t>(o.fold + 1) / o.folds;
    // The fold's slices first, in the shuffled order, then the rest.
    std::rotate(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(lo), order.end());
    n_test = hi - lo;
  }
  if (!o.test_keys.empty()) {
    // The given slices first (in the shuffled order), then the rest.
    const std::set<std::string> held(o.test_keys.begin(), o.test_keys.end());
    const auto is_held = [&](std::size_t i) {
      return held.count(slice_key(lx[i]->tensor, lx[i]->mode, lx[i]->slice)) > 0;
    };
    std::stable_partition(order.begin(), order.end(), is_held);
    n_test = static_cast<std::size_t>(std::count_if(order.begin(), order.end(), is_held));
  }
  std::vector<features::SliceInput> tx, vx;
  std::vector<int> ty, vy;
  std::vector<const SliceLabel*> vl;
  std::vector<std::vector<double>> targets;  // the training slices' soft targets, if asked for
  for (std::size_t k = 0; k < order.size(); ++k) {
    (k < n_test ? vx : tx).push_back(x[order[k]]);
    (k < n_test ? vy : ty).push_back(y[order[k]]);
    if (k < n_test) {
      vl.push_back(lx[order[k]]);
      rep.test_keys.push_back(slice_key(vl.back()->tensor, vl.back()->mode, vl.back()->slice));
    } else if (o.soft_labels > 0) {
      targets.push_back(soft_target(*lx[order[k]], o.soft_labels, o.shape.classes));
    }
  }
  auto by_time = [&](const std::vector<int>& pick) { return judge_picks(vl, pick); };
  if (tx.empty()) throw Error("slice training: the held-out share leaves nothing to train on");
  rep.train = static_cast<int>(tx.size());
  rep.test = static_cast<int>(vx.size());
  for (int c : ty) ++rep.per_class[c];
  if (o.bag < 1 || o.bag > SliceGcn::kMaxBag)
    throw Error("slice training: bag must be from 1 to " + std::to_string(SliceGcn::kMaxBag));
  model = SliceGcn(o.shape, o.seed);
  rep.losses = model.train(tx, ty, o.train, o.soft_labels > 0 ? &targets : nullptr);
  for (int k = 1; k < o.bag; ++k) {
    SliceGcn member(o.shape, o.seed + static_cast<std::uint64_t>(k));
    GcnTrainOptions t = o.train;
    t.seed = o.train.seed + static_cast<std::uint64_t>(k);
    member.train(tx, ty, t, o.soft_labels > 0 ? &targets : nullptr);
    model.add_member(std::move(member));
  }
  rep.gcn_train_accuracy = model.accuracy(tx, ty);
  rep.gcn_test_accuracy = model.accuracy(vx, vy);
  {
    std::vector<int> pick;
    for (const auto& in : vx) pick.push_back(model.predict(in));
    rep.gcn_test_time = by_time(pick);
  }
  if (!vx.empty()) {
    std::vector<std::vector<double>> gx, gv;
    // The globals the model reads, so that both learn from the same features.
    const auto first = [&](const features::SliceInput& in) {
      return std::vector<double>(in.globals.begin(), in.globals.begin() + o.shape.globals);
    };
    for (const auto& in : tx) gx.push_back(first(in));
    for (const auto& in : vx) gv.push_back(first(in));
    XgbOptions xo;
    xo.seed = o.seed;
    XgbClassifier xgb(o.shape.classes, xo);
    xgb.fit(gx, ty);
    rep.xgb_test_accuracy = xgb.accuracy(gv, vy);
    rep.xgb_test_time = by_time(xgb.predict(gv));
    // The structural rule that tune --op sptv uses without a model, on the same slices.
    std::size_t right = 0;
    std::vector<int> rule;
    for (std::size_t i = 0; i < vx.size(); ++i) {
      rule.push_back(rule_format(vx[i].globals, static_cast<double>(vx[i].nonempty_rows)));
      right += rule.back() == vy[i];
    }
    rep.rule_test_accuracy = static_cast<double>(right) / static_cast<double>(vx.size());
    rep.rule_test_time = by_time(rule);
  }
  return rep;
}

SpDerivation derive_sparsity_threshold(const std::vector<double>& density,
                                       const std::vector<int>& best_format, double step) {
  if (density.size() != best_format.size() || !(step > 0))
    throw Error("sp derivation: one best format per density, and a positive step");
  std::map<std::int64_t, SpGroup> groups;
  for (std::size_t i = 0; i < density.size(); ++i) {
    const auto k = static_cast<std::int64_t>(std::llround(density[i] / step));
    auto& g = groups[k];
    g.density = static_cast<double>(k) * step;
    ++g.slices;
    g.dense_best += best_format[i] == 4;
  }
  SpDerivation d;
  for (auto& [k, g] : groups) {
    g.share = static_cast<double>(g.dense_best) / g.slices;
    d.groups.push_back(g);
  }
  // The lowest group from which every denser group has Dense best for all of its slices.
  for (auto it = d.groups.rbegin(); it != d.groups.rend() && it->share == 1.0; ++it)
    d.threshold = it->density;
  return d;
}

}  // namespace sparsetune::models
