// `train --model row-order`: the row-order predictor trained from the times `collect --op spmm
// --row-orders` put in the tuning database (op "spmm-row-order"), as `row-orders train` trains it
// from a CSV.
#include <filesystem>
#include <map>
#include <set>

#include "core/row_orders.hpp"
#include "io/file_bytes.hpp"
#include "models/predictors.hpp"
#include "models/row_order_model.hpp"

namespace sparsetune::models {

namespace {
using nlohmann::json;
}  // namespace

TrainResult train_row_order_model(const db::TuningDb& db, const TrainOptions& opt) {
  const std::string source = opt.database.empty() ? db.path() : opt.database;
  const auto& orders = row_orders::all_orders();
  std::map<std::string, std::size_t> index;
  for (std::size_t k = 0; k < orders.size(); ++k) index[row_orders::name(orders[k])] = k;
  std::string arch = opt.arch;
  std::set<std::string> devices;
  // One record per (matrix, N); a time measured twice keeps the faster.
  std::map<std::pair<std::string, std::int64_t>, RowOrderRecord> by_key;
  for (const auto& m : db.measurements()) {
    if (m.op != kRowOrderOp) continue;
    if (arch.empty()) arch = m.arch;
    if (m.arch != arch) continue;
    auto [it, fresh] = by_key.try_emplace({m.fingerprint, m.n});
    RowOrderRecord& r = it->second;
    if (fresh) {
      const auto row = db.matrix(m.fingerprint);
      r.matrix = row ? row->name : m.fingerprint;
      if (row) r.rows = row->rows, r.cols = row->cols, r.nnz = row->nnz;
      r.n = m.n;
      r.time_us.assign(orders.size(), -1.0);
      r.order_ms.assign(orders.size(), -1.0);
    }
    if (m.candidate == "cusparse/spmm-best") {
      if (m.ok && m.time_us > 0 && (r.cusparse_us < 0 || m.time_us < r.cusparse_us))
        r.cusparse_us = m.time_us;
      continue;
    }
    json p;
    try {
      p = json::parse(m.params);
    } catch (const json::exception&) {
      throw Error(source + ": a row-order time of " + r.matrix + " has malformed params");
    }
    const auto k = index.find(p.value("order", std::string()));
    if (k == index.end()) continue;  // collect/failed rows, or an order this build lacks
    if (p.contains("features") && r.features.empty())
      r.features = p["features"].get<std::vector<double>>();
    r.order_ms[k->second] = p.value("order_ms", -1.0);
    double& t = r.time_us[k->second];
    if (m.ok && m.time_us > 0 && (t < 0 || m.time_us < t)) t = m.time_us;
    devices.insert(m.device);
  }
  std::vector<RowOrderRecord> records;
  for (auto& [k, r] : by_key)
    if (r.features.size() == row_order_feature_names().size()) records.push_back(std::move(r));
  if (records.empty())
    throw NothingToLearn(source + ": no row-order times" + (arch.empty() ? "" : " for " + arch) +
                         " (collect --op spmm --row-orders measures them on a GPU)");
  RowOrderTrainOptions t;
  t.seed = opt.split.seed;
  t.test_fraction = opt.split.test_fraction;
  t.xgb.seed = opt.split.seed;
  t.xgb.threads = opt.threads;
  json rep;
  const auto model = RowOrderModel::train(records, t, &rep);
  std::string device;
  for (const auto& d : devices) device += (device.empty() ? "" : ", ") + d;
  rep["model"] = "row-order";
  rep["arch"] = arch;
  rep["device"] = device;
  rep["training_set"]["database"] = source;
  TrainResult out;
  out.model = "row-order";
  if (!opt.out_dir.empty()) {
    const auto dir = (std::filesystem::path(opt.out_dir) / arch).string();
    std::filesystem::create_directories(dir);
    ModelFile f;
    f.arch = arch;
    f.device = device;
    f.created = opt.created.empty() ? today_utc() : opt.created;
    out.files = model.write(dir, f);
    const auto report_path = dir + "/row-order.report.json";
    out.files.push_back(report_path);
    rep["files"] = out.files;
    io::write_file_atomic(report_path, rep.dump(2) + "\n");
  }
  out.report = rep;
  return out;
}

}  // namespace sparsetune::models
