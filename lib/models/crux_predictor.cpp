#include "models/crux_predictor.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "core/error.hpp"
#include "core/version.hpp"
#include "features/matrix_features.hpp"
#include "io/file_bytes.hpp"
#include "models/matrix_split.hpp"
#include "models/model_file.hpp"
#include "models/training_set.hpp"

namespace sparsetune::models {

namespace {

using nlohmann::json;

// A hot part gaining less than this share over the all-cold point is not worth its launch and
// its conversion: such a matrix is labelled all cold, (0, 0).
constexpr double kHotGain = 0.02;
// A predicted tau_r below half the crux search's grid step (0.02) is no hot part: (0, 0). Left
// as it is, it would put one short row on tensor cores, a launch for nothing.
constexpr double kMinTauR = 0.01;

// Into the triangle 0 <= tau_r <= tau_c <= 1; no hot part is written (0, 0).
Crux clamp(double c, double r) {
  Crux x;
  x.tau_c = std::clamp(c, 0.0, 1.0);
  x.tau_r = std::clamp(r, 0.0, x.tau_c);
  if (x.tau_r < kMinTauR) x = Crux{};
  return x;
}

double geomean(const std::vector<double>& v) {
  if (v.empty()) return 0.0;
  double s = 0;
  for (double x : v) s += std::log(x);
  return std::exp(s / static_cast<double>(v.size()));
}

}  // namespace

std::vector<std::string> crux_feature_names() {
  static const std::vector<std::string> names = [] {
    auto v = features::feature_names(features::kMatXtract);
    v.push_back("dtype_f16");
    return v;
  }();
  return names;
}

std::vector<double> crux_inputs(const json& features, const std::string& dtype) {
  const auto& names = crux_feature_names();
  auto x = feature_inputs(features, names, names.size() - 1, "crux predictor");
  x.push_back(dtype == "f16" ? 1.0 : 0.0);
  return x;
}

CruxPredictor::CruxPredictor(ModelFile file, XgbRegressor tau_c, XgbRegressor tau_r)
    : file_(std::move(file)), tau_c_(std::move(tau_c)), tau_r_(std::move(tau_r)) {}

Crux CruxPredictor::predict(const json& features, const std::string& dtype) const {
  const auto x = crux_inputs(features, dtype);
  return clamp(tau_c_.predict({x})[0], tau_r_.predict({x})[0]);
}

CruxPredictor CruxPredictor::read(const std::string& description_path) {
  ModelFile f = read_model_file(description_path);
  const auto& names = crux_feature_names();
  if (const auto why = stale_reason(f, kCruxName, names); !why.empty())
    throw Error(description_path + ": stale model: " + why);
  if (f.kind != "xgboost-regressor-pair")
    throw Error(description_path + ": field 'kind' must be \"xgboost-regressor-pair\"");
  const auto path = (std::filesystem::path(description_path).parent_path() / f.booster).string();
  const auto j = json::parse(io::read_file(path), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("tau_c") || !j.contains("tau_r"))
    throw Error(path + ": not a crux booster file (fields 'tau_c' and 'tau_r')");
  auto c = XgbRegressor::load(j["tau_c"].dump(), names.size(), path + ": tau_c");
  auto r = XgbRegressor::load(j["tau_r"].dump(), names.size(), path + ": tau_r");
  return CruxPredictor(std::move(f), std::move(c), std::move(r));
}

std::optional<CruxPredictor> CruxPredictor::find(const std::string& dir, const std::string& arch,
                                                 std::string* why) {
  return find_model<CruxPredictor>(dir, arch, kCruxName, &CruxPredictor::read, why);
}

std::vector<CruxSearch> crux_searches(const TrainingSet& t) {
  std::vector<CruxSearch> all;
  for (const auto& m : t.matrices) {
    CruxSearch s;
    s.matrix = &m;
    for (const auto& x : m.samples)
      if (!x.graph.ops.empty() && x.graph.ops.front().op == "CRUX_SPLIT") {
        const auto& p = x.graph.ops.front().params;
        s.points.push_back({p.value("tau_c", 0.0), p.value("tau_r", 0.0)});
        s.us.push_back(x.time_us);
      }
    if (s.points.size() < 3) continue;  // no crux search here, a seed or two
    s.best = static_cast<std::size_t>(std::min_element(s.us.begin(), s.us.end()) - s.us.begin());
    for (std::size_t k = 0; k < s.points.size(); ++k)
      if (s.points[k].tau_r == 0 && (!s.cold || s.us[k] < s.us[*s.cold])) s.cold = k;
    s.label = s.cold && s.us[*s.cold] <= (1 + kHotGain) * s.us[s.best] ? Crux{} : s.points[s.best];
    all.push_back(std::move(s));
  }
  return all;
}

std::size_t judged_point(const CruxSearch& s, Crux p, std::string* how) {
  if (p.tau_r == 0 && s.cold) {
    if (how) *how = "the all-cold point";
    return *s.cold;
  }
  if (how) *how = "the nearest measured point";
  std::optional<std::size_t> near;
  double d_near = 1e300;
  for (std::size_t k = 0; k < s.points.size(); ++k) {
    if ((s.points[k].tau_r > 0) != (p.tau_r > 0)) continue;
    const double d = std::hypot(s.points[k].tau_c - p.tau_c, s.points[k].tau_r - p.tau_r);
    if (d < d_near) d_near = d, near = k;
  }
  return near ? *near : s.cold ? *s.cold : s.best;
}

TrainResult train_crux(const db::TuningDb& db, const TrainOptions& opt) {
  const TrainingSet t = read_spmv_training_set(db, opt.arch, true);
  const std::vector<CruxSearch> all = crux_searches(t);
  std::map<std::string, std::int64_t> nnz_of;
  for (const auto& s : all) nnz_of[s.matrix->fingerprint] = s.matrix->nnz;
  if (nnz_of.size() < 4)
    throw NothingToLearn((opt.database.empty() ? db.path() : opt.database) + ": " +
                         std::to_string(nnz_of.size()) +
                         " matrices with a crux search of 3 or more points (tune --op spmv with "
                         "a budget measures one); the crux predictor needs at least 4");
  auto [split, is_test] = hold_out(nnz_of, opt.split);
  std::vector<const CruxSearch*> train, test;
  for (const auto& s : all) (is_test[s.matrix->fingerprint] ? test : train).push_back(&s);

  const XgbOptions xo = predictor_xgb(opt);
  std::vector<std::vector<double>> x;
  std::vector<double> yc, yr;
  for (const auto* s : train) {
    x.push_back(crux_inputs(s->matrix->features, s->matrix->dtype));
    yc.push_back(s->label.tau_c);
    yr.push_back(s->label.tau_r);
  }
  XgbRegressor rc(xo), rr(xo);
  rc.fit(x, yc);
  rr.fit(x, yr);

  ModelFile file;
  file.model = kCruxName;
  file.kind = "xgboost-regressor-pair";
  file.target =
      "tau_c and tau_r of the fastest point of the matrix's crux search; (0, 0) when a hot part "
      "gains under 2 % over the all-cold point";
  file.op = "spmv";
  file.arch = t.arch;
  std::string devices;
  for (const auto& d : t.devices) devices += (devices.empty() ? "" : ", ") + d;
  file.device = devices;
  file.created = opt.created.empty() ? today_utc() : opt.created;
  file.tool_version = kVersion;
  file.features = crux_feature_names();
  file.booster = std::string(kCruxName) + ".xgb.json";
  const CruxPredictor model(file, XgbRegressor::load(rc.save(), x.front().size(), "tau_c"),
                            XgbRegressor::load(rr.save(), x.front().size(), "tau_r"));

  // The predicted crux is judged by a measured point of the same graph or, failing that, the
  // nearest one: all cold is the all-cold point (every tau_r = 0 is one graph); a hot crux, the
  // nearest measured hot point. Its time against the search's best (a new point would need the
  // GPU: scripts/crux-eval.py measures the predicted crux itself).
  auto evaluate = [&](const std::vector<const CruxSearch*>& set, bool rows) {
    double sec = 0, ser = 0;
    std::vector<double> share;
    int within = 0, same_kind = 0;
    json per = json::array();
    for (const auto* s : set) {
      const Crux p = model.predict(s->matrix->features, s->matrix->dtype);
      const Crux& b = s->label;
      sec += (p.tau_c - b.tau_c) * (p.tau_c - b.tau_c);
      ser += (p.tau_r - b.tau_r) * (p.tau_r - b.tau_r);
      same_kind += (p.tau_r > 0) == (b.tau_r > 0);
      std::string judged;
      const std::size_t near = judged_point(*s, p, &judged);
      share.push_back(s->us[s->best] / s->us[near]);
      within += s->us[near] <= 1.1 * s->us[s->best];
      if (rows)
        per.push_back({{"matrix", s->matrix->name},
                       {"dtype", s->matrix->dtype},
                       {"predicted", {p.tau_c, p.tau_r}},
                       {"label", {b.tau_c, b.tau_r}},
                       {"bo_best", {s->points[s->best].tau_c, s->points[s->best].tau_r}},
                       {"bo_best_us", s->us[s->best]},
                       {"all_cold_us", s->cold ? json(s->us[*s->cold]) : json(nullptr)},
                       {"judged_by", judged},
                       {"judged", {s->points[near].tau_c, s->points[near].tau_r}},
                       {"judged_us", s->us[near]}});
    }
    const double n = static_cast<double>(std::max<std::size_t>(set.size(), 1));
    json j = {{"matrices", set.size()},
              {"mse_tau_c", sec / n},
              {"mse_tau_r", ser / n},
              {"hot_or_cold_agrees", same_kind / n},
              {"geomean_share_of_bo", geomean(share)},
              {"within_10pct", within / n}};
    if (rows) j["per_matrix"] = per;
    return j;
  };
  std::vector<std::string> test_names;
  for (const auto* s : test) test_names.push_back(s->matrix->name);
  json split_json = split.description;
  split_json["test"] = test_names;
  file.training_set = {
      {"database",
       opt.database.empty() ? std::filesystem::path(db.path()).filename().string() : opt.database},
      {"matrices", train.size()},
      {"all_matrices", all.size()}};
  file.split = split_json;
  file.options = {{"rounds", xo.rounds}, {"max_depth", xo.max_depth}, {"eta", xo.eta}};

  TrainResult r;
  r.model = kCruxName;
  r.report = {{"model", kCruxName},
              {"arch", t.arch},
              {"device", devices},
              {"created", file.created},
              {"training_set", file.training_set},
              {"split", split_json},
              {"train", evaluate(train, false)},
              {"test", evaluate(test, true)}};
  if (!opt.out_dir.empty()) {
    const auto dir = arch_dir(opt.out_dir, t.arch);
    const json boosters = {{"tau_c", json::parse(rc.save())}, {"tau_r", json::parse(rr.save())}};
    r.files = write_model_files(dir, file, boosters.dump() + "\n", &r.report);
  }
  return r;
}

}  // namespace sparsetune::models
