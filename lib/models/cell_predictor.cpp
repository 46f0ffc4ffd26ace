#include "models/cell_predictor.hpp"

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
#include "io/staged_folder.hpp"
#include "models/matrix_split.hpp"

namespace sparsetune::models {

namespace {

using nlohmann::json;

constexpr double kInf = std::numeric_limits<double>::infinity();

// One matrix at one N (value type, device): the best CELL graph, the best other graph and BSR.
struct Case {
  std::string fingerprint, name, dtype, device;
  std::int64_t n = 0, nnz = 0;
  json features;
  double cell = kInf, csr = kInf, bcsr = kInf;
  bool label() const { return csr / cell >= 1.1 && bcsr / cell >= 1.1; }
};

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
  std::vector<double> x;
  const auto& names = cell_feature_names();
  for (std::size_t i = 0; i + 1 < names.size(); ++i) {
    const auto it = features.find(names[i]);
    if (it == features.end() || !it->is_number())
      throw Error("liteform-cell predictor: the matrix has no feature '" + names[i] + "'");
    x.push_back(it->get<double>());
  }
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
  std::map<std::string, db::MatrixRow> matrix;
  for (const auto& m : db.matrices()) matrix[m.fingerprint] = m;
  std::map<std::tuple<std::string, std::int64_t, std::string, std::string>, Case> cases;
  std::set<std::string> archs;
  for (const auto& m : db.measurements()) {
    if (!m.ok || m.op != "spmm" || !(m.time_us > 0) || m.device == "cost-model") continue;
    if (!opt.arch.empty() && m.arch != opt.arch) continue;
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
    if (m.candidate.rfind("cusparse/bsr", 0) == 0)
      c.bcsr = std::min(c.bcsr, m.time_us);
    else if (m.candidate.rfind("graph/", 0) == 0)
      (is_cell_graph(m.graph) ? c.cell : c.csr) =
          std::min(is_cell_graph(m.graph) ? c.cell : c.csr, m.time_us);
  }
  if (archs.size() > 1)
    throw Error(db.path() + ": SpMM measurements of several architectures: say which with --arch");
  std::vector<Case> usable;
  for (auto& [key, c] : cases) {
    if (!(c.cell < kInf && c.csr < kInf)) continue;  // CELL and the CSR family both measured
    c.features = json::parse(matrix[c.fingerprint].features, nullptr, false);
    try {
      (void)cell_inputs(c.features, c.n);
    } catch (const Error&) {
      continue;
    }
    usable.push_back(c);
  }
  std::map<std::string, std::int64_t> nnz_of;
  for (const auto& c : usable) nnz_of[c.fingerprint] = c.nnz;
  if (nnz_of.size() < 4)
    throw NothingToLearn(db.path() + ": " + std::to_string(nnz_of.size()) +
                         " matrices with CELL and CSR-family SpMM graphs both measured (tune "
                         "--op spmm measures them); the liteform-cell predictor needs at least 4");
  std::vector<SplitItem> items;
  for (const auto& [fp, nnz] : nnz_of) items.push_back({fp, nnz, ""});
  const MatrixSplit split = split_matrices(items, opt.split);
  std::map<std::string, bool> is_test;
  for (std::size_t i = 0; i < items.size(); ++i) is_test[items[i].fingerprint] = split.test[i];
  std::vector<const Case*> train, test;
  for (const auto& c : usable) (is_test[c.fingerprint] ? test : train).push_back(&c);

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
  XgbOptions xo;
  xo.rounds = 200;
  xo.max_depth = 4;
  xo.eta = 0.1;
  xo.seed = opt.split.seed;
  xo.threads = opt.threads;
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

  ModelFile file;
  file.model = kCellName;
  file.kind = "xgboost-classifier";
  file.target = "CELL at least 1.1x both the best CSR-family SpMM graph and cuSPARSE BSR";
  file.op = "spmm";
  file.arch = archs.empty() ? opt.arch : *archs.begin();
  file.created = opt.created.empty() ? today_utc() : opt.created;
  file.tool_version = kVersion;
  file.features = cell_feature_names();
  file.booster = std::string(kCellName) + ".xgb.json";
  std::vector<std::string> test_names;
  for (const auto& [fp, t] : is_test)
    if (t) test_names.push_back(matrix[fp].name);
  json split_json = split.description;
  split_json["test"] = test_names;
  file.training_set = {
      {"database",
       opt.database.empty() ? std::filesystem::path(db.path()).filename().string() : opt.database},
      {"cases", train.size()},
      {"cell_wins", wins},
      {"all_cases", usable.size()}};
  file.split = split_json;
  file.options = {{"rounds", xo.rounds}, {"max_depth", xo.max_depth}, {"eta", xo.eta}};

  TrainResult r;
  r.model = kCellName;
  r.report = {{"model", kCellName},          {"arch", file.arch},
              {"created", file.created},     {"training_set", file.training_set},
              {"split", split_json},         {"train", evaluate(train, false)},
              {"test", evaluate(test, true)}};
  if (!opt.out_dir.empty()) {
    const auto dir = (std::filesystem::path(opt.out_dir) / file.arch).string();
    io::StagedFolder staged(dir);
    r.files.push_back(staged.add(file.model + ".json", file.to_json().dump(2) + "\n"));
    r.files.push_back(staged.add(file.booster, cls.save()));
    r.report["files"] = r.files;
    r.files.push_back(staged.add(file.model + ".report.json", r.report.dump(2) + "\n"));
    staged.commit();
  }
  return r;
}

}  // namespace sparsetune::models
