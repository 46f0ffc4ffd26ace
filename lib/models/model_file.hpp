#pragma once
// A trained predictor on disk: configs/models/<arch>/<name>.json describes it and names the
// booster file beside it (XGBoost's JSON model format, or its binary UBJSON form: the rankings'
// .xgb.ubj). The description is versioned and lists
// the model's inputs in order, so a program whose features changed recognises the model as stale
// and does not feed it the wrong columns.
//   {"format": "sparsetune-model", "format_version": 1, "model": "spmv-rank",
//    "kind": "xgboost-regressor", "target": "...", "op": "spmv", "arch": "sm_90",
//    "device": "...", "created": "2026-11-24", "tool_version": "...",
//    "features": [...], "booster": "spmv-rank.xgb.ubj",
//    "level_booster": "spmv-rank.level.xgb.ubj" (optional),
//    "training_set": {"fingerprint": "...", "matrices": 40, "rows": 9000, ...},
//    "split": {...}, "options": {...}}
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace sparsetune::models {

// The model-file layout this program writes and reads.
inline constexpr int kModelFormatVersion = 1;

struct ModelFile {
  int format_version = kModelFormatVersion;
  std::string model;  // predictor name, e.g. "spmv-rank"
  std::string kind;   // "xgboost-regressor"
  std::string target;
  std::string op, arch, device, created, tool_version;
  std::vector<std::string> features;
  std::string booster;  // file name beside the description
  // Optional second booster beside it, over the matrix's inputs alone, whose prediction the
  // ranking models add to the first's (models/spmv_ranker.hpp); "" when there is none.
  std::string level_booster;
  nlohmann::json training_set = nlohmann::json::object();
  nlohmann::json split = nlohmann::json::object();
  nlohmann::json options = nlohmann::json::object();
  nlohmann::json to_json() const;
};

// Parses a description; throws Error naming `source` and the field at fault.
ModelFile model_file_from_json(const nlohmann::json& j, const std::string& source);
ModelFile read_model_file(const std::string& path);

// "" when the model can be used by this program for `name` with these inputs; otherwise why not
// (another format version, another predictor, a different feature list).
std::string stale_reason(const ModelFile& m, const std::string& name,
                         const std::vector<std::string>& features);

// For a model that reads its inputs by name: where each input it was trained on sits among this
// program's `features`, so that inputs added since (a new operator, a new parameter) are left out
// of its rows. Sets `why` (and returns nothing) for another format version or predictor, or for
// an input this program no longer computes.
std::vector<std::size_t> feature_columns(const ModelFile& m, const std::string& name,
                                         const std::vector<std::string>& features,
                                         std::string* why);

// The matrices a model held out (its split.test), for a model trained again on the same ones;
// throws Error naming `source` and the field when the list is missing, empty or not of names.
std::set<std::string> held_out_matrices(const ModelFile& m, const std::string& source);

// <dir>/<arch>/<name>.json
std::string model_path(const std::string& dir, const std::string& arch, const std::string& name);

// <dir>/<arch>, the folder of one architecture's models. Throws Error unless `arch` names an
// architecture (sm_90, sm_90a): the name comes from training data and options, and one such as
// "../../x" would write outside `dir`.
std::string arch_dir(const std::string& dir, const std::string& arch);

// Puts a trained model into `dir` together (the folder's other files are kept): its description
// `<model>.json`, its booster bytes as `file.booster`, and, when given, its report
// `<model>.report.json`, which then lists the first two in "files". Returns the paths written.
std::vector<std::string> write_model_files(const std::string& dir, const ModelFile& file,
                                           const std::string& booster,
                                           nlohmann::json* report = nullptr);

// The values of `names[0 .. count)` in a feature row as the database stores it ({"group.name":
// value}); throws Error naming `who` and the first feature missing.
std::vector<double> feature_inputs(const nlohmann::json& row, const std::vector<std::string>& names,
                                   std::size_t count, const std::string& who);

// The shipped model `name` of `arch` under `dir`, read by `read(description_path)`, or nothing
// with `why` saying so: missing, stale or unreadable (read's Error).
template <class Model, class Read>
std::optional<Model> find_model(const std::string& dir, const std::string& arch,
                                const std::string& name, Read&& read, std::string* why) {
  const auto path = model_path(dir, arch, name);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    if (why) *why = "no " + name + " model for " + arch + " (" + path + ")";
    return std::nullopt;
  }
  try {
    return read(path);
  } catch (const Error& e) {
    if (why) *why = e.what();
    return std::nullopt;
  }
}

}  // namespace sparsetune::models
