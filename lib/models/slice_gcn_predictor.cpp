// `train --model slice-gcn`: Slice-GCN trained from the slice timings `collect --op sptv` put in
// the tuning database (op "sptv-slice"), as `slice-gcn train` trains it from a CSV.
#include <filesystem>

#include "core/version.hpp"
#include "io/file_bytes.hpp"
#include "models/model_file.hpp"
#include "models/predictors.hpp"
#include "models/slice_timing_rows.hpp"
#include "models/slice_training.hpp"

namespace sparsetune::models {

using nlohmann::json;
namespace fs = std::filesystem;

TrainResult train_slice_gcn_model(const db::TuningDb& db, const TrainOptions& opt) {
  const std::string source = opt.database.empty() ? db.path() : opt.database;
  const auto rows = read_slice_timing_rows(db, opt.arch, opt.data_dir, source);
  const std::string& arch = rows.arch;
  const auto& devices = rows.devices;
  if (rows.timings.empty())
    throw NothingToLearn(source + ": no slice timings" + (arch.empty() ? "" : " for " + arch) +
                         " (collect --op sptv measures them on a GPU)");
  const auto labels = label_slices(rows.timings);

  SliceTrainingOptions so;
  so.seed = opt.split.seed;  // the held-out share stays slice-gcn train's (20 % of the slices)
  so.train.seed = opt.split.seed;
  so.train.threads = opt.threads;
  if (opt.epochs > 0) so.train.epochs = opt.epochs;
  if (opt.fiber_globals) so.shape.globals = features::kAllGlobals;
  if (opt.degree_buckets) so.shape.node_features = kGcnNodeFeaturesWithBuckets;
  so.train.average_last = opt.average_last;
  so.shape.global_bins = opt.global_bins;
  so.soft_labels = opt.soft_labels;
  so.bag = opt.bag;
  SliceGcn model;
  const auto r = train_slice_gcn(labels, "", so, model);

  std::string device;
  for (const auto& d : devices) device += (device.empty() ? "" : ", ") + d;
  TrainResult out;
  out.model = "slice-gcn";
  out.report = {
      {"model", "slice-gcn"},
      {"arch", arch},
      {"device", device},
      {"created", opt.created.empty() ? today_utc() : opt.created},
      {"tool_version", kVersion},
      {"training_set",
       {{"database", source}, {"tensors", rows.tensors.size()}, {"labelled", r.labelled}}},
      {"split",
       {{"unit", "slice"},
        {"holdout", so.holdout},
        {"seed", opt.split.seed},
        {"dense_excluded", r.dense_excluded},
        {"train_slices", r.train},
        {"test_slices", r.test}}},
      {"epochs", so.train.epochs},
      {"globals", so.shape.globals},
      {"node_features", so.shape.node_features},
      {"global_bins", so.shape.global_bins},
      {"average_last", so.train.average_last},
      {"soft_labels", so.soft_labels},
      {"bag", so.bag},
      {"final_loss", r.losses.empty() ? 0.0 : r.losses.back()},
      {"train", {{"slices", r.train}, {"gcn_accuracy", r.gcn_train_accuracy}}},
      {"test",
       {{"slices", r.test},
        {"gcn_accuracy", r.gcn_test_accuracy},
        {"xgb_accuracy", r.xgb_test_accuracy},
        {"rule_accuracy", r.rule_test_accuracy},
        {"gcn_by_time", to_json(r.gcn_test_time)},
        {"xgb_by_time", to_json(r.xgb_test_time)},
        {"rule_by_time", to_json(r.rule_test_time)}}}};
  if (!opt.out_dir.empty()) {
    const fs::path dir = fs::path(arch_dir(opt.out_dir, arch));
    fs::create_directories(dir);
    GcnModelInfo info;
    info.arch = arch;
    info.date = out.report["created"];
    info.labels = "gpu";
    info.sparsity_threshold = so.sparsity_threshold;
    info.notes = "train --model slice-gcn from " + source;
    info.test_slices = r.test_keys;
    const auto model_path = (dir / "slice_gcn.safetensors").string();
    model.save(model_path, info);
    const auto report_path = (dir / "slice_gcn.report.json").string();
    out.report["files"] = {model_path, report_path};
    io::write_file_atomic(report_path, out.report.dump(2) + "\n");
    out.files = {model_path, report_path};
  }
  return out;
}

}  // namespace sparsetune::models
