// `sparsetune features FILE`: every feature set of a matrix or a tensor, grouped by method.
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "cli.hpp"
#include "core/error.hpp"
#include "features/matrix_features.hpp"
#include "features/tensor_features.hpp"
#include "io/matrix_file.hpp"
#include "io/tensor_file.hpp"

namespace sparsetune::cli {

namespace {
struct FeaturesOptions {
  std::string file;
  std::string group;
  int mode = -1;
  int product_mode = -1;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Integers as integers, everything else with 6 significant digits.
std::string format_value(double v) {
  char buf[64];
  if (v == std::floor(v) && std::abs(v) < 1e15)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::vector<std::string> groups_of(const std::vector<features::Feature>& f) {
  std::vector<std::string> g;
  for (const auto& x : f)
    if (g.empty() || g.back() != x.group) g.push_back(x.group);
  return g;
}

// Keeps only `group` when one was asked for; refuses a name that is not there.
std::vector<features::Feature> pick_group(const std::vector<features::Feature>& f,
                                          const std::string& group) {
  if (group.empty()) return f;
  auto picked = features::select_group(f, group);
  if (picked.empty()) {
    std::string known;
    for (const auto& g : groups_of(f)) known += (known.empty() ? "" : ", ") + g;
    throw Error("--group: no group '" + group + "' for this input (groups: " + known + ")");
  }
  return picked;
}

nlohmann::ordered_json by_group(const std::vector<features::Feature>& f) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& x : f) j[x.group][x.name] = x.value;
  return j;
}

nlohmann::ordered_json flat(const std::vector<features::Feature>& f) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& x : f) j[x.name] = x.value;
  return j;
}

void print_groups(const std::vector<features::Feature>& f) {
  for (const auto& g : groups_of(f)) {
    std::printf("\n%s\n", g.c_str());
    std::vector<std::vector<std::string>> rows;
    for (const auto& x : f)
      if (x.group == g) rows.push_back({"  " + x.name, format_value(x.value)});
    print_table(rows);
  }
}

void print_ordered_json(const nlohmann::ordered_json& j) {
  std::printf("%s\n", j.dump(2).c_str());  // ordered: features keep the papers' order
}

void run_matrix(const FeaturesOptions& o, const GlobalOptions& g) {
  if (o.mode != -1 || o.product_mode != -1)
    throw Error("--mode and --product-mode apply to tensors (.tns), not to matrices");
  auto t0 = std::chrono::steady_clock::now();
  const Csr64 a = io::read_matrix(o.file);
  const double parse_s = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  const auto all = features::matrix_features(a);
  const double feature_s = seconds_since(t0);
  spdlog::debug("{}: parse {:.3f} s, features {:.3f} s", o.file, parse_s, feature_s);
  const auto f = pick_group(all, o.group);
  if (g.json) {
    nlohmann::ordered_json j;
    j["file"] = o.file;
    j["kind"] = "matrix";
    j["rows"] = a.rows;
    j["cols"] = a.cols;
    j["nnz"] = a.nnz();
    j["parse_seconds"] = parse_s;
    j["feature_seconds"] = feature_s;
    j["features"] = by_group(f);
    return print_ordered_json(j);
  }
  std::printf("%s: matrix %lld x %lld, %lld entries; parse %.3f s, features %.3f s\n",
              o.file.c_str(), static_cast<long long>(a.rows), static_cast<long long>(a.cols),
              static_cast<long long>(a.nnz()), parse_s, feature_s);
  print_groups(f);
}

void run_tensor(const FeaturesOptions& o, const GlobalOptions& g) {
  if (!o.group.empty() && o.group != features::kIapSptv)
    throw Error("--group: a tensor has only the group '" + std::string(features::kIapSptv) + "'");
  auto t0 = std::chrono::steady_clock::now();
  const SparseTensor t = io::read_tensor(o.file);
  const double parse_s = seconds_since(t0);
  auto check_mode = [&](int m, const char* flag) {
    if (m < -1 || m >= t.order())
      throw Error(std::string(flag) + " " + std::to_string(m) + ": the tensor has modes 0 to " +
                  std::to_string(t.order() - 1));
  };
  check_mode(o.mode, "--mode");
  check_mode(o.product_mode, "--product-mode");
  const int product_mode =
      o.product_mode >= 0 ? o.product_mode : features::default_column_mode(t.order(), o.mode);
  t0 = std::chrono::steady_clock::now();
  const auto whole = features::tensor_features(t, product_mode);
  std::vector<features::SliceFeatures> slices;
  if (o.mode >= 0) slices = features::slice_features(t, o.mode, product_mode);
  const double feature_s = seconds_since(t0);
  spdlog::debug("{}: parse {:.3f} s, features {:.3f} s", o.file, parse_s, feature_s);
  if (g.json) {
    nlohmann::ordered_json j;
    j["file"] = o.file;
    j["kind"] = "tensor";
    j["order"] = t.order();
    j["dims"] = t.dims;
    j["nnz"] = t.nnz();
    j["parse_seconds"] = parse_s;
    j["feature_seconds"] = feature_s;
    j["product_mode"] = product_mode;
    j["features"] = by_group(whole);
    if (o.mode >= 0) {
      auto& s = j["slices"];
      s["mode"] = o.mode;
      s["count"] = slices.size();
      s["features"] = nlohmann::ordered_json::array();
      for (const auto& sl : slices) {
        nlohmann::ordered_json one;
        one["index"] = sl.index;
        one["features"] = flat(sl.features);
        s["features"].push_back(std::move(one));
      }
    }
    return print_ordered_json(j);
  }
  std::string dims;
  for (auto d : t.dims) dims += (dims.empty() ? "" : " x ") + std::to_string(d);
  std::printf("%s: order-%d tensor %s, %lld entries; parse %.3f s, features %.3f s\n",
              o.file.c_str(), t.order(), dims.c_str(), static_cast<long long>(t.nnz()), parse_s,
              feature_s);
  std::printf("columns along mode %d, rows along the other modes\n", product_mode);
  print_groups(whole);
  if (o.mode < 0) return;
  std::printf("\nslices along mode %d (%zu non-empty)\n", o.mode, slices.size());
  std::vector<std::vector<std::string>> rows;
  if (!slices.empty()) {
    std::vector<std::string> head{"  index"};
    for (const auto& x : slices.front().features) head.push_back(x.name);
    rows.push_back(std::move(head));
  }
  for (const auto& sl : slices) {
    std::vector<std::string> r{"  " + std::to_string(sl.index)};
    for (const auto& x : sl.features) r.push_back(format_value(x.value));
    rows.push_back(std::move(r));
  }
  print_table(rows);
}
}  // namespace

void add_features_command(CLI::App& app, const GlobalOptions& g) {
  auto opts = std::make_shared<FeaturesOptions>();
  auto* cmd = app.add_subcommand(
      "features",
      "Every feature set of a matrix (.mtx, .mtx.gz, .safetensors) or tensor (.tns, .safetensors)");
  cmd->add_option("FILE", opts->file, "Matrix or tensor file")->required();
  cmd->add_option("--group", opts->group,
                  "Only this group: alphasparse, liteform, matxtract, permutation; iap_sptv for "
                  "tensors");
  cmd->add_option("--mode", opts->mode,
                  "Tensors: also list the features of each non-empty slice along this mode "
                  "(0-based)");
  cmd->add_option("--product-mode", opts->product_mode,
                  "Tensors: the mode multiplied by the vector, whose index is the column of the "
                  "matrix view (0-based; default: the last mode other than --mode)");
  cmd->callback([opts, &g] {
    if (io::is_tensor_file(opts->file))
      run_tensor(*opts, g);
    else
      run_matrix(*opts, g);
  });
}

}  // namespace sparsetune::cli
