#include "models/spmv_ranker.hpp"

#include <cmath>
#include <filesystem>

#include "core/error.hpp"
#include "io/file_bytes.hpp"
#include "io/staged_folder.hpp"
#include "models/spmv_rank_features.hpp"

namespace sparsetune::models {

namespace {
// Where each of the model's inputs sits in this program's row (empty when the lists are the
// same); throws Error naming `source` for a stale model.
std::vector<std::size_t> model_columns(const ModelFile& f, const std::string& source) {
  const bool spmm = f.model == kSpmmRankName;
  const auto& names = spmm ? spmm_rank_feature_names() : spmv_rank_feature_names();
  std::string why;
  auto columns = feature_columns(f, spmm ? kSpmmRankName : kSpmvRankName, names, &why);
  if (!why.empty()) throw Error(source + ": stale model: " + why);
  if (f.features == names) columns.clear();
  return columns;
}

void check_level_goes_with_kind(const ModelFile& f, bool has_level) {
  if (has_level != (f.kind == kRelativeRankKind))
    throw Error(f.model + ": a level booster goes with kind \"" + kRelativeRankKind +
                "\" and only with it");
}
}  // namespace

SpmvRanker::SpmvRanker(ModelFile file, XgbRegressor booster, std::optional<XgbRegressor> level)
    : file_(std::move(file)), booster_(std::move(booster)), level_(std::move(level)) {
  check_level_goes_with_kind(file_, level_.has_value());
  columns_ = model_columns(file_, file_.model);
}

SpmvRanker SpmvRanker::read(const std::string& description_path) {
  ModelFile f = read_model_file(description_path);
  const bool spmm = f.model == kSpmmRankName;
  model_columns(f, description_path);  // stale or not, before its boosters are read
  const bool relative = f.kind == kRelativeRankKind;
  if (!relative && f.kind != kAbsoluteRankKind)
    throw Error(description_path + ": field 'kind' must be \"" + kRelativeRankKind + "\" or \"" +
                kAbsoluteRankKind + "\"");
  if (relative == f.level_booster.empty())
    throw Error(description_path + ": field 'level_booster' " +
                (relative ? "is required by kind \"" + std::string(kRelativeRankKind) + "\""
                          : "goes only with kind \"" + std::string(kRelativeRankKind) + "\""));
  const auto beside = [&](const std::string& name) {
    return (std::filesystem::path(description_path).parent_path() / name).string();
  };
  const auto booster_path = beside(f.booster);
  auto b = XgbRegressor::load(io::read_file(booster_path), f.features.size(), booster_path);
  std::optional<XgbRegressor> level;
  if (relative) {
    const auto level_path = beside(f.level_booster);
    level =
        XgbRegressor::load(io::read_file(level_path),
                           spmm ? spmm_rank_matrix_width() : spmv_rank_matrix_width(), level_path);
  }
  return SpmvRanker(std::move(f), std::move(b), std::move(level));
}

std::optional<SpmvRanker> SpmvRanker::find(const std::string& dir, const std::string& arch,
                                           std::string* why, const char* name) {
  return find_model<SpmvRanker>(dir, arch, name, &SpmvRanker::read, why);
}

std::string SpmvRanker::outside_training(std::int64_t nnz) const {
  const auto& t = file_.training_set;
  if (!t.contains("nnz_min") || !t.contains("nnz_max") || !t["nnz_min"].is_number() ||
      !t["nnz_max"].is_number())
    return "";
  const auto lo = t["nnz_min"].get<double>(), hi = t["nnz_max"].get<double>();
  const auto v = static_cast<double>(nnz);
  if (v >= lo / 2 && v <= hi * 2) return "";
  return file_.model + " was trained on matrices of " +
         std::to_string(t["nnz_min"].get<std::int64_t>()) + " to " +
         std::to_string(t["nnz_max"].get<std::int64_t>()) + " entries, not " + std::to_string(nnz);
}

std::vector<std::string> SpmvRanker::test_matrices() const {
  std::vector<std::string> names;
  if (const auto it = file_.split.find("test"); it != file_.split.end() && it->is_array())
    for (const auto& n : *it)
      if (n.is_string()) names.push_back(n.get<std::string>());
  return names;
}

std::vector<double> SpmvRanker::predict_us(
    const MatrixInputs& m, const std::vector<const graph::Graph*>& candidates) const {
  if (candidates.empty()) return {};
  const auto base = spmm() ? spmm_rank_matrix_part(m.features, m.dtype, m.n, "matrix")
                           : spmv_rank_matrix_part(m.features, m.dtype, "matrix");
  std::vector<std::vector<double>> rows;
  rows.reserve(candidates.size());
  for (const auto* g : candidates) {
    rows.push_back(base);
    append_graph_part(rows.back(), *g);
    if (!columns_.empty()) {  // the model's inputs, by name
      std::vector<double> r;
      r.reserve(columns_.size());
      for (const auto k : columns_) r.push_back(rows.back()[k]);
      rows.back() = std::move(r);
    }
  }
  const auto p = booster_.predict(rows);
  const double floor = spmm() ? spmm_floor_us(m.rows, m.cols, m.nnz, m.n, m.dtype)
                              : spmv_floor_us(m.rows, m.cols, m.nnz, m.dtype);
  const double level = level_ ? level_->predict({base}).front() : 0.0;
  std::vector<double> us(p.size());
  for (std::size_t k = 0; k < p.size(); ++k) us[k] = floor * std::exp(level + p[k]);
  return us;
}

std::vector<std::string> write_model(const std::string& dir, ModelFile file,
                                     const XgbRegressor& booster,
                                     const std::vector<std::pair<std::string, std::string>>& extra,
                                     const XgbRegressor* level) {
  if (file.booster.empty()) file.booster = file.model + ".xgb.ubj";
  check_level_goes_with_kind(file, level != nullptr);
  if (level && file.level_booster.empty()) file.level_booster = file.model + ".level.xgb.ubj";
  if (!level) file.level_booster.clear();
  // The files are put in place together (the folder's other models are kept): a description
  // never names a booster of another training.
  io::StagedFolder staged(dir);
  std::vector<std::string> paths = {
      staged.add(file.model + ".json", file.to_json().dump(2) + "\n")};
  // The file's name says its encoding: .ubj binary (the default), anything else JSON.
  const auto bytes = [](const std::string& name, const XgbRegressor& r) {
    return io::ends_with_nocase(name, ".ubj") ? r.save_binary() : r.save();
  };
  paths.push_back(staged.add(file.booster, bytes(file.booster, booster)));
  if (level) paths.push_back(staged.add(file.level_booster, bytes(file.level_booster, *level)));
  for (const auto& [name, bytes] : extra) paths.push_back(staged.add(name, bytes));
  staged.commit();
  return paths;
}

}  // namespace sparsetune::models
