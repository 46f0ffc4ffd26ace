#include "models/model_file.hpp"

#include <filesystem>
#include <map>

#include "core/arch_name.hpp"
#include "core/error.hpp"
#include "io/file_bytes.hpp"
#include "io/staged_folder.hpp"

namespace sparsetune::models {

namespace {

std::string text(const nlohmann::json& j, const char* key, const std::string& source) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string() || it->get<std::string>().empty())
    throw Error(source + ": field '" + key + "' must be a non-empty string");
  return it->get<std::string>();
}

std::string optional_text(const nlohmann::json& j, const char* key, const std::string& source) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  if (!it->is_string()) throw Error(source + ": field '" + key + "' must be a string");
  return it->get<std::string>();
}

// A file named by field `key` must lie beside the description: a name, not a path.
std::string beside(std::string name, const char* key, const std::string& source) {
  if (!name.empty() && (name.find('/') != std::string::npos || name.front() == '.'))
    throw Error(source + ": field '" + key + "' must be a file name beside the description");
  return name;
}

nlohmann::json object(const nlohmann::json& j, const char* key, const std::string& source) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nlohmann::json::object();
  if (!it->is_object()) throw Error(source + ": field '" + key + "' must be an object");
  return *it;
}

}  // namespace

nlohmann::json ModelFile::to_json() const {
  nlohmann::json j = {{"format", "sparsetune-model"},
                      {"format_version", format_version},
                      {"model", model},
                      {"kind", kind},
                      {"target", target},
                      {"op", op},
                      {"arch", arch},
                      {"device", device},
                      {"created", created},
                      {"tool_version", tool_version},
                      {"booster", booster},
                      {"training_set", training_set},
                      {"split", split},
                      {"options", options},
                      {"features", features}};
  if (!level_booster.empty()) j["level_booster"] = level_booster;
  return j;
}

ModelFile model_file_from_json(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object() || j.value("format", "") != "sparsetune-model")
    throw Error(source + ": not a sparsetune model description (\"format\": \"sparsetune-model\")");
  ModelFile m;
  const auto v = j.find("format_version");
  if (v == j.end() || !v->is_number_integer())
    throw Error(source + ": field 'format_version' must be an integer");
  m.format_version = v->get<int>();
  m.model = text(j, "model", source);
  m.kind = text(j, "kind", source);
  m.booster = beside(text(j, "booster", source), "booster", source);
  m.level_booster = beside(optional_text(j, "level_booster", source), "level_booster", source);
  m.target = optional_text(j, "target", source);
  m.op = optional_text(j, "op", source);
  m.arch = optional_text(j, "arch", source);
  m.device = optional_text(j, "device", source);
  m.created = optional_text(j, "created", source);
  m.tool_version = optional_text(j, "tool_version", source);
  const auto f = j.find("features");
  if (f == j.end() || !f->is_array() || f->empty())
    throw Error(source + ": field 'features' must be a non-empty list of names");
  for (std::size_t k = 0; k < f->size(); ++k) {
    if (!(*f)[k].is_string())
      throw Error(source + ": features[" + std::to_string(k) + "] must be a string");
    m.features.push_back((*f)[k].get<std::string>());
  }
  m.training_set = object(j, "training_set", source);
  m.split = object(j, "split", source);
  // The held-out matrices (what eval --test-split and train --holdout-like read), if listed.
  if (const auto t = m.split.find("test"); t != m.split.end()) {
    bool names = t->is_array();
    if (names)
      for (const auto& n : *t) names = names && n.is_string();
    if (!names) throw Error(source + ": field 'split.test' must be a list of matrix names");
  }
  m.options = object(j, "options", source);
  return m;
}

ModelFile read_model_file(const std::string& path) {
  const std::string bytes = io::read_file(path);
  nlohmann::json j = nlohmann::json::parse(bytes, nullptr, false);
  if (j.is_discarded()) throw Error(path + ": not valid JSON");
  return model_file_from_json(j, path);
}

namespace {
// Why the file is not a `name` model this program reads ("" when it is).
std::string identity_reason(const ModelFile& m, const std::string& name) {
  if (m.format_version != kModelFormatVersion)
    return "model format version " + std::to_string(m.format_version) + ", this program reads " +
           std::to_string(kModelFormatVersion);
  if (m.model != name) return "it is a '" + m.model + "' model, not '" + name + "'";
  return "";
}
}  // namespace

std::string stale_reason(const ModelFile& m, const std::string& name,
                         const std::vector<std::string>& features) {
  if (auto why = identity_reason(m, name); !why.empty()) return why;
  if (m.features.size() != features.size())
    return "it reads " + std::to_string(m.features.size()) + " features, this program computes " +
           std::to_string(features.size());
  for (std::size_t k = 0; k < features.size(); ++k)
    if (m.features[k] != features[k])
      return "feature " + std::to_string(k) + " is '" + m.features[k] + "', this program has '" +
             features[k] + "'";
  return "";
}

std::vector<std::size_t> feature_columns(const ModelFile& m, const std::string& name,
                                         const std::vector<std::string>& features,
                                         std::string* why) {
  const auto fail = [&](std::string reason) {
    *why = std::move(reason);
    return std::vector<std::size_t>{};
  };
  if (auto reason = identity_reason(m, name); !reason.empty()) return fail(std::move(reason));
  std::map<std::string, std::size_t> at;
  for (std::size_t k = 0; k < features.size(); ++k) at.emplace(features[k], k);
  std::vector<std::size_t> columns;
  for (const auto& f : m.features) {
    const auto it = at.find(f);
    if (it == at.end()) return fail("it reads feature '" + f + "', which this program lacks");
    columns.push_back(it->second);
  }
  why->clear();
  return columns;
}

std::set<std::string> held_out_matrices(const ModelFile& m, const std::string& source) {
  const auto test = m.split.find("test");
  if (test == m.split.end() || !test->is_array() || test->empty())
    throw Error(source + ": field 'split.test' must be a non-empty list of held-out matrices");
  std::set<std::string> names;
  for (const auto& name : *test) {
    if (!name.is_string()) throw Error(source + ": field 'split.test' must list matrix names");
    names.insert(name.get<std::string>());
  }
  return names;
}

std::string arch_dir(const std::string& dir, const std::string& arch) {
  if (arch_number(arch) < 0)
    throw Error("'" + arch + "' is not an architecture name (such as sm_90 or sm_90a)");
  return (std::filesystem::path(dir) / arch).string();
}

std::string model_path(const std::string& dir, const std::string& arch, const std::string& name) {
  return (std::filesystem::path(arch_dir(dir, arch)) / (name + ".json")).string();
}

std::vector<std::string> write_model_files(const std::string& dir, const ModelFile& file,
                                           const std::string& booster, nlohmann::json* report) {
  io::StagedFolder staged(dir);
  std::vector<std::string> paths = {
      staged.add(file.model + ".json", file.to_json().dump(2) + "\n")};
  paths.push_back(staged.add(file.booster, booster));
  if (report) {
    (*report)["files"] = paths;
    paths.push_back(staged.add(file.model + ".report.json", report->dump(2) + "\n"));
  }
  staged.commit();
  return paths;
}

std::vector<double> feature_inputs(const nlohmann::json& row, const std::vector<std::string>& names,
                                   std::size_t count, const std::string& who) {
  std::vector<double> x;
  for (std::size_t i = 0; i < count; ++i) {
    const auto it = row.find(names.at(i));
    if (it == row.end() || !it->is_number())
      throw Error(who + ": the matrix has no feature '" + names[i] + "'");
    x.push_back(it->get<double>());
  }
  return x;
}

}  // namespace sparsetune::models
