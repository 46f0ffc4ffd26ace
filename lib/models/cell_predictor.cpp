#include "models/cell_predictor.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "core/error.hpp"
#include "core/version.hpp"
#include "features/matrix_features.hpp"
#include "io/file_bytes.hpp"
#include "models/matrix_split.hpp"
#include "models/model_file.hpp"

namespace sparsetune::models {

namespace {

using nlohmann::json;

constexpr double kInf = std::numeric_limits<double>::infinity();

using Case = LiteformCase;
using Cases = LiteformCases;

int col_div_count(const std::string& graph_json) {
  const json g = json::parse(graph_json, nullptr, false);
  if (!g.is_object() || !g.contains("ops") || !g["ops"].is_array() || g["ops"].empty()) return 0;
  const auto& first = g["ops"][0];
  return first.value("op", "") == "COL_DIV" ? first.value("count", 0) : 0;
}

}  // namespace

LiteformCases read_liteform_cases(const db::TuningDb& db, const std::string& arch) {
  Cases out;
  auto& matrix = out.matrix;
  for (const auto& m : db.matrices()) matrix[m.fingerprint] = m;
  std::map<std::tuple<std::string, std::int64_t, std::string, std::string>, Case> cases;
  std::set<std::string> archs;
  for (const auto& m : db.measurements()) {
    if (!m.ok || m.op != "spmm" || !(m.time_us > 0) || m.device == "cost-model") continue;
    if (!arch.empty() && m.arch != arch) continue;
    const json p = json::parse(m.params, nullptr, false);
    if (p.is_object() && p.value("predicted", false)) continue;
    const auto it = matrix.find(m.fingerprint);
    if (it == matrix.end()) continue;
    archs.insert(m.arch);
    Case& c = cases[{m.fingerprint, m.n, m.dtype, m.device}];
    c.fingerprint = m.fingerprint;
    c.name = it->second.name;
    c.nnz = it->second.nnz;
    c.n = m.n;
    c.dtype = m.dtype;
    c.device = m.device;
    if (m.candidate.rfind("cusparse/bsr", 0) == 0) {
      c.bcsr = std::min(c.bcsr, m.time_us);
    } else if (m.candidate.rfind("graph/", 0) == 0 && is_cell_graph(m.graph)) {
      const int count = col_div_count(m.graph);
      if (m.time_us < c.cell) c.cell = m.time_us, c.partitions = count;
      auto [t, fresh] = c.cell_by_count.try_emplace(count, m.time_us);
      if (!fresh) t->second = std::min(t->second, m.time_us);
    } else if (m.candidate.rfind("graph/", 0) == 0) {
      c.csr = std::min(c.csr, m.time_us);
    }
  }
  if (archs.size() > 1)
    throw Error(db.path() + ": SpMM measurements of several architectures: say which with --arch");
  out.arch = archs.empty() ? arch : *archs.begin();
  for (auto& [key, c] : cases) {
    if (!(c.cell < kInf && c.csr < kInf)) continue;
    c.features = json::parse(matrix[c.fingerprint].features, nullptr, false);
    try {
      (void)cell_inputs(c.features, c.n);
    } catch (const Error&) {
      continue;
    }
    out.usable.push_back(c);
  }
  std::set<std::string> devices;
  for (const auto& c : out.usable) devices.insert(c.device);
  for (const auto& d : devices) out.devices += (out.devices.empty() ? "" : ", ") + d;
  return out;
}

namespace {

// The description both LiteForm predictors share: what they read, where their cases came from,
// and the held-out split with its matrices by name; each adds its own counts and options.
ModelFile liteform_file(const char* name, const char* target, const Cases& read,
                        const HeldOut& held, const db::TuningDb& db, const TrainOptions& opt,
                        std::size_t train_cases, std::size_t all_cases) {
  ModelFile file;
  file.model = name;
  file.kind = "xgboost-classifier";
  file.target = target;
  file.op = "spmm";
  file.arch = read.arch;
  file.device = read.devices;
  file.created = opt.created.empty() ? today_utc() : opt.created;
  file.tool_version = kVersion;
  file.features = cell_feature_names();
  file.booster = std::string(name) + ".xgb.json";
  std::vector<std::string> test_names;
  for (const auto& [fp, t] : held.test)
    if (t) test_names.push_back(read.matrix.at(fp).name);
  file.split = held.split.description;
  file.split["test"] = test_names;
  file.training_set = {
      {"database",
       opt.database.empty() ? std::filesystem::path(db.path()).filename().string() : opt.database},
      {"cases", train_cases},
      {"all_cases", all_cases}};
  return file;
}

// The training report (the model file's description, the split, the train and test scores) and,
// with an output folder, the model files written under OUT/<arch>/.
TrainResult report_and_write(const ModelFile& file, json train, json test, const XgbClassifier& cls,
                             const TrainOptions& opt) {
  TrainResult r;
  r.model = file.model;
  r.report = {{"model", file.model},
              {"arch", file.arch},
              {"device", file.device},
              {"created", file.created},
              {"training_set", file.training_set},
              {"split", file.split},
              {"train", std::move(train)},
              {"test", std::move(test)}};
  if (!opt.out_dir.empty()) {
    const auto dir = arch_dir(opt.out_dir, file.arch);
    r.files = write_model_files(dir, file, cls.save(), &r.report);
  }
  return r;
}

}  // namespace

std::vector<std::string> cell_feature_names() {
  static const std::vector<std::string> names = [] {
    auto v = features::feature_names(features::kLiteForm);
    v.push_back("log2_n");
    return v;
  }();
  return names;
}

std::vector<double> cell_inputs(const json& features, std::int64_t n) {
  const auto& names = cell_feature_names();
  auto x = feature_inputs(features, names, names.size() - 1, "liteform predictor");
  x.push_back(std::log2(static_cast<double>(std::max<std::int64_t>(n, 1))));
  return x;
}

bool is_cell_graph(const std::string& graph_json) {
  return graph_json.find("\"COL_DIV\"") != std::string::npos &&
         graph_json.find("\"BIN\"") != std::string::npos;
}

CellPredictor::CellPredictor(ModelFile file, XgbClassifier booster)
    : file_(std::move(file)), booster_(std::move(booster)) {}

double CellPredictor::probability(const json& features, std::int64_t n) const {
  return booster_.predict_proba({cell_inputs(features, n)})[0][1];
}

CellPredictor CellPredictor::read(const std::string& description_path) {
  ModelFile f = read_model_file(description_path);
  const auto& names = cell_feature_names();
  if (const auto why = stale_reason(f, kCellName, names); !why.empty())
    throw Error(description_path + ": stale model: " + why);
  if (f.kind != "xgboost-classifier")
    throw Error(description_path + ": field 'kind' must be \"xgboost-classifier\"");
  const auto path = (std::filesystem::path(description_path).parent_path() / f.booster).string();
  auto b = XgbClassifier::load(io::read_file(path), 2, names.size(), path);
  return CellPredictor(std::move(f), std::move(b));
}

std::optional<CellPredictor> CellPredictor::find(const std::string& dir, const std::string& arch,
                                                 std::string* why) {
  return find_model<CellPredictor>(dir, arch, kCellName, &CellPredictor::read, why);
}

TrainResult train_liteform_cell(const db::TuningDb& db, const TrainOptions& opt) {
  const Cases read = read_liteform_cases(db, opt.arch);
  const auto& usable = read.usable;
  std::map<std::string, std::int64_t> nnz_of;
  for (const auto& c : usable) nnz_of[c.fingerprint] = c.nnz;
  if (nnz_of.size() < 4)
    throw NothingToLearn((opt.database.empty() ? db.path() : opt.database) + ": " +
                         std::to_string(nnz_of.size()) +
                         " matrices with CELL and CSR-family SpMM graphs both measured (tune "
                         "--op spmm measures them); the liteform-cell predictor needs at least 4");
  const HeldOut held = hold_out(nnz_of, opt.split);
  std::vector<const Case*> train, test;
  for (const auto& c : usable) (held.test.at(c.fingerprint) ? test : train).push_back(&c);

  // Class weights inverse to the classes' frequency among the training cases.
  int wins = 0;
  for (const auto* c : train) wins += c->label();
  const double n_train = static_cast<double>(train.size());
  const double classes = (wins > 0) + (wins < static_cast<int>(train.size()));  // present ones
  std::vector<std::vector<double>> x;
  std::vector<int> y;
  std::vector<double> w;
  for (const auto* c : train) {
    x.push_back(cell_inputs(c->features, c->n));
    y.push_back(c->label() ? 1 : 0);
    const int same = c->label() ? wins : static_cast<int>(train.size()) - wins;
    w.push_back(n_train / (classes * std::max(same, 1)));
  }
  const XgbOptions xo = predictor_xgb(opt);
  XgbClassifier cls(2, xo);
  cls.fit(x, y, w);

  auto evaluate = [&](const std::vector<const Case*>& set, bool rows) {
    int right = 0, positives = 0;
    json per = json::array();
    for (const auto* c : set) {
      const double p = cls.predict_proba({cell_inputs(c->features, c->n)})[0][1];
      right += (p >= 0.5) == c->label();
      positives += c->label();
      if (rows)
        per.push_back({{"matrix", c->name},
                       {"n", c->n},
                       {"dtype", c->dtype},
                       {"cell_wins", c->label()},
                       {"probability", p},
                       {"cell_us", c->cell},
                       {"csr_us", c->csr},
                       {"bcsr_us", c->bcsr < kInf ? json(c->bcsr) : json(nullptr)}});
    }
    json j = {{"cases", set.size()},
              {"cell_wins", positives},
              {"accuracy", set.empty() ? 0.0 : static_cast<double>(right) / set.size()}};
    if (rows) j["per_case"] = per;
    return j;
  };

  ModelFile file = liteform_file(
      kCellName, "CELL at least 1.1x both the best CSR-family SpMM graph and cuSPARSE BSR", read,
      held, db, opt, train.size(), usable.size());
  file.training_set["cell_wins"] = wins;
  file.options = {{"rounds", xo.rounds}, {"max_depth", xo.max_depth}, {"eta", xo.eta}};
  return report_and_write(file, evaluate(train, false), evaluate(test, true), cls, opt);
}

PartitionPredictor::PartitionPredictor(ModelFile file, XgbClassifier booster,
                                       std::vector<int> counts)
    : file_(std::move(file)), booster_(std::move(booster)), counts_(std::move(counts)) {}

int PartitionPredictor::predict(const json& features, std::int64_t n) const {
  return counts_.at(static_cast<std::size_t>(booster_.predict({cell_inputs(features, n)})[0]));
}

PartitionPredictor PartitionPredictor::read(const std::string& description_path) {
  ModelFile f = read_model_file(description_path);
  const auto& names = cell_feature_names();
  if (const auto why = stale_reason(f, kPartitionsName, names); !why.empty())
    throw Error(description_path + ": stale model: " + why);
  if (f.kind != "xgboost-classifier")
    throw Error(description_path + ": field 'kind' must be \"xgboost-classifier\"");
  std::vector<int> counts;
  if (f.options.contains("partition_counts") && f.options["partition_counts"].is_array())
    for (const auto& c : f.options["partition_counts"])
      if (c.is_number_integer() && c.get<int>() >= 1) counts.push_back(c.get<int>());
  if (counts.size() < 2)
    throw Error(description_path + ": field 'options.partition_counts' needs two counts or more");
  const auto path = (std::filesystem::path(description_path).parent_path() / f.booster).string();
  auto b =
      XgbClassifier::load(io::read_file(path), static_cast<int>(counts.size()), names.size(), path);
  return PartitionPredictor(std::move(f), std::move(b), std::move(counts));
}

std::optional<PartitionPredictor> PartitionPredictor::find(const std::string& dir,
                                                           const std::string& arch,
                                                           std::string* why) {
  return find_model<PartitionPredictor>(dir, arch, kPartitionsName, &PartitionPredictor::read, why);
}

TrainResult train_liteform_partitions(const db::TuningDb& db, const TrainOptions& opt) {
  const Cases read = read_liteform_cases(db, opt.arch);
  std::vector<const Case*> usable;
  std::set<int> seen;
  for (const auto& c : read.usable)
    if (c.partitions >= 1) usable.push_back(&c), seen.insert(c.partitions);
  std::map<std::string, std::int64_t> nnz_of;
  for (const auto* c : usable) nnz_of[c->fingerprint] = c->nnz;
  if (nnz_of.size() < 4 || seen.size() < 2)
    throw NothingToLearn(
        (opt.database.empty() ? db.path() : opt.database) + ": " + std::to_string(nnz_of.size()) +
        " matrices with CELL measured, whose best graphs have " + std::to_string(seen.size()) +
        " partition count(s); the liteform-partitions predictor needs 4 "
        "matrices and 2 counts at least");
  const std::vector<int> counts(seen.begin(), seen.end());
  auto class_of = [&](int p) {
    return static_cast<int>(std::find(counts.begin(), counts.end(), p) - counts.begin());
  };
  const HeldOut held = hold_out(nnz_of, opt.split);
  std::vector<const Case*> train, test;
  for (const auto* c : usable) (held.test.at(c->fingerprint) ? test : train).push_back(c);

  std::map<int, int> freq;
  for (const auto* c : train) ++freq[c->partitions];
  std::vector<std::vector<double>> x;
  std::vector<int> y;
  std::vector<double> w;
  for (const auto* c : train) {
    x.push_back(cell_inputs(c->features, c->n));
    y.push_back(class_of(c->partitions));
    w.push_back(static_cast<double>(train.size()) /
                (static_cast<double>(freq.size()) * freq[c->partitions]));
  }
  const XgbOptions xo = predictor_xgb(opt);
  XgbClassifier cls(static_cast<int>(counts.size()), xo);
  cls.fit(x, y, w);

  auto evaluate = [&](const std::vector<const Case*>& set, bool rows) {
    int right = 0;
    double sim = 0;
    // eq. (2): per matrix (value type, device), the vectors of counts across its N.
    std::map<std::tuple<std::string, std::string, std::string>, std::pair<double, double>> norms;
    std::map<std::tuple<std::string, std::string, std::string>, double> dots;
    json per = json::array();
    for (const auto* c : set) {
      const int p = c->partitions;
      const int q =
          counts[static_cast<std::size_t>(cls.predict({cell_inputs(c->features, c->n)})[0])];
      right += p == q;
      sim += 1.0 - std::abs(p - q) / static_cast<double>(std::max(p, q));  // eq. (1)
      const auto key = std::tuple{c->fingerprint, c->dtype, c->device};
      dots[key] += static_cast<double>(p) * q;
      norms[key].first += static_cast<double>(p) * p;
      norms[key].second += static_cast<double>(q) * q;
      if (rows) per.push_back({{"matrix", c->name}, {"n", c->n}, {"best", p}, {"predicted", q}});
    }
    double cosine = 0;
    for (const auto& [key, d] : dots) cosine += d / std::sqrt(norms[key].first * norms[key].second);
    const double n = static_cast<double>(std::max<std::size_t>(set.size(), 1));
    json j = {{"cases", set.size()},
              {"accuracy", right / n},
              {"similarity", sim / n},
              {"cosine_similarity", dots.empty() ? 0.0 : cosine / dots.size()}};
    if (rows) j["per_case"] = per;
    return j;
  };

  ModelFile file = liteform_file(kPartitionsName, "the column partitions of the fastest CELL graph",
                                 read, held, db, opt, train.size(), usable.size());
  file.options = {{"rounds", xo.rounds},
                  {"max_depth", xo.max_depth},
                  {"eta", xo.eta},
                  {"partition_counts", counts}};
  return report_and_write(file, evaluate(train, false), evaluate(test, true), cls, opt);
}

}  // namespace sparsetune::models
