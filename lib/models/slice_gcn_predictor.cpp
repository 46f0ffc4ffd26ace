// `train --model slice-gcn`: Slice-GCN trained from the slice timings `collect --op sptv` put in
// the tuning database (op "sptv-slice"), as `slice-gcn train` trains it from a CSV.
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "core/version.hpp"
#include "io/file_bytes.hpp"
#include "models/predictors.hpp"
#include "models/slice_training.hpp"

namespace sparsetune::models {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

int format_index(const std::string& name) {
  const auto& c = slice_format_classes();
  for (std::size_t i = 0; i < c.size(); ++i)
    if (c[i] == name) return static_cast<int>(i);
  throw Error("slice-gcn: a measurement names no slice format: '" + name + "'");
}

}  // namespace

TrainResult train_slice_gcn_model(const db::TuningDb& db, const TrainOptions& opt) {
  const std::string source = opt.database.empty() ? db.path() : opt.database;
  // Each tensor's path, from its row.
  std::map<std::string, std::string> path_of;
  std::set<std::string> devices;
  std::string arch = opt.arch;
  // Per (tensor, mode, slice, format): the log times of every device that measured it; a slice
  // measured more than once is labelled by their geometric mean.
  std::map<std::tuple<std::string, int, std::int64_t, int>, std::pair<double, int>> logs;
  for (const auto& m : db.measurements()) {
    if (m.op != kSliceTimingOp || !m.ok || !(m.time_us > 0)) continue;
    if (arch.empty()) arch = m.arch;
    if (m.arch != arch) continue;
    auto it = path_of.find(m.fingerprint);
    if (it == path_of.end()) {
      const auto row = db.matrix(m.fingerprint);
      if (!row)
        throw Error(source + ": slice timings of tensor " + m.fingerprint + " without its row");
      std::string path;
      try {
        path = json::parse(row->features).at("path").get<std::string>();
      } catch (const json::exception&) {
        throw Error(source + ": tensor " + row->name + " has no path among its features");
      }
      if (!opt.data_dir.empty())
        path = (fs::path(opt.data_dir) / fs::path(path).filename()).string();
      it = path_of.emplace(m.fingerprint, path).first;
    }
    json p;
    try {
      p = json::parse(m.params);
    } catch (const json::exception&) {
      throw Error(source + ": a slice timing of " + it->second + " has malformed params");
    }
    const auto key =
        std::make_tuple(it->second, static_cast<int>(m.n), p.value("slice", std::int64_t{-1}),
                        format_index(p.value("format", std::string())));
    auto& acc = logs[key];
    acc.first += std::log(m.time_us);
    acc.second += 1;
    devices.insert(m.device);
  }
  if (logs.empty())
    throw NothingToLearn(source + ": no slice timings" + (arch.empty() ? "" : " for " + arch) +
                         " (collect --op sptv measures them on a GPU)");
  std::vector<SliceTiming> timings;
  for (const auto& [k, v] : logs)
    timings.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k),
                       std::exp(v.first / v.second)});
  const auto labels = label_slices(timings);

  SliceTrainingOptions so;
  so.seed = opt.split.seed;  // the held-out share stays slice-gcn train's (20 % of the slices)
  so.train.seed = opt.split.seed;
  so.train.threads = opt.threads;
  if (opt.epochs > 0) so.train.epochs = opt.epochs;
  SliceGcn model;
  const auto r = train_slice_gcn(labels, "", so, model);

  std::string device;
  for (const auto& d : devices) device += (device.empty() ? "" : ", ") + d;
  TrainResult out;
  out.model = "slice-gcn";
  out.report = {{"model", "slice-gcn"},
                {"arch", arch},
                {"device", device},
                {"created", opt.created.empty() ? today_utc() : opt.created},
                {"tool_version", kVersion},
                {"training_set",
                 {{"database", source}, {"tensors", path_of.size()}, {"labelled", r.labelled}}},
                {"split",
                 {{"unit", "slice"},
                  {"holdout", so.holdout},
                  {"seed", opt.split.seed},
                  {"dense_excluded", r.dense_excluded},
                  {"train_slices", r.train},
                  {"test_slices", r.test}}},
                {"epochs", so.train.epochs},
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
    const fs::path dir = fs::path(opt.out_dir) / arch;
    fs::create_directories(dir);
    GcnModelInfo info;
    info.arch = arch;
    info.date = out.report["created"];
    info.labels = "gpu";
    info.sparsity_threshold = so.sparsity_threshold;
    info.notes = "train --model slice-gcn from " + source;
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
