// `train --model row-order`: the row-order predictor trained from the times `collect --op spmm
// --row-orders` put in the tuning database (op "spmm-row-order"), as `row-orders train` trains it
// from a CSV.
#include <filesystem>
#include <set>

#include "io/file_bytes.hpp"
#include "models/predictors.hpp"
#include "models/row_order_model.hpp"
#include "models/row_order_rows.hpp"

namespace sparsetune::models {

using nlohmann::json;

TrainResult train_row_order_model(const db::TuningDb& db, const TrainOptions& opt) {
  const std::string source = opt.database.empty() ? db.path() : opt.database;
  auto rows = read_row_order_rows(db, opt.arch, source, opt.order_candidates);
  const std::string& arch = rows.arch;
  const auto& devices = rows.devices;
  auto& records = rows.records;
  if (records.empty())
    throw NothingToLearn(source + ": no row-order times" + (arch.empty() ? "" : " for " + arch) +
                         " (collect --op spmm --row-orders measures them on a GPU)");
  RowOrderTrainOptions t;
  t.seed = opt.split.seed;
  t.test_fraction = opt.split.test_fraction;
  t.held_out = opt.split.held_out;
  t.held_out_from = opt.split.held_out_from;
  t.xgb.seed = opt.split.seed;
  t.xgb.threads = opt.threads;
  t.class_weights = !opt.no_class_weights;
  t.classes = opt.order_classes;
  t.priors = !opt.no_priors;
  json rep;
  const auto model = RowOrderModel::train(records, t, &rep);
  // Where the database holds more than one collection of a record, how far one collection's best
  // order carries to the other: the scale the predictor's share of the oracle's gain is read on
  // (models/row_order_repeat.hpp).
  const auto test = rep["split"].value("test", std::vector<std::string>());
  const std::set<std::string> held_out(test.begin(), test.end());
  std::vector<CollectionTimes> test_collections;
  for (std::size_t i = 0; i < records.size(); ++i)
    if (held_out.count(records[i].matrix)) test_collections.push_back(rows.collections[i]);
  rep["repeat"] = label_repeatability(rows.collections);
  rep["test"]["repeat"] = label_repeatability(test_collections);
  std::string device;
  for (const auto& d : devices) device += (device.empty() ? "" : ", ") + d;
  rep["model"] = "row-order";
  rep["arch"] = arch;
  rep["device"] = device;
  rep["training_set"]["database"] = source;
  TrainResult out;
  out.model = "row-order";
  if (!opt.out_dir.empty()) {
    const auto dir = arch_dir(opt.out_dir, arch);
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
