#include "models/slice_timing_rows.hpp"

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>
#include <utility>

#include "core/error.hpp"
#include "models/slice_gcn.hpp"

namespace sparsetune::models {

namespace {

int format_index(const std::string& source, const std::string& name) {
  const auto& c = slice_format_classes();
  for (std::size_t i = 0; i < c.size(); ++i)
    if (c[i] == name) return static_cast<int>(i);
  throw Error(source + ": a slice timing names no slice format: '" + name + "'");
}

}  // namespace

SliceTimingRows read_slice_timing_rows(const db::TuningDb& db, const std::string& arch,
                                       const std::string& data_dir, const std::string& source) {
  using nlohmann::json;
  namespace fs = std::filesystem;
  SliceTimingRows out;
  out.arch = arch;
  std::map<std::string, std::string> path_of;  // fingerprint -> tensor path
  // Per (tensor, mode, slice, format): the sum and count of its log times.
  std::map<std::tuple<std::string, int, std::int64_t, int>, std::pair<double, int>> logs;
  for (const auto& m : db.measurements()) {
    if (m.op != kSliceTimingOp || !m.ok || !(m.time_us > 0)) continue;
    if (out.arch.empty()) out.arch = m.arch;
    if (m.arch != out.arch) continue;
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
      if (!data_dir.empty()) path = (fs::path(data_dir) / fs::path(path).filename()).string();
      it = path_of.emplace(m.fingerprint, path).first;
      out.tensors.insert(path);
    }
    json p;
    try {
      p = json::parse(m.params);
    } catch (const json::exception&) {
      throw Error(source + ": a slice timing of " + it->second + " has malformed params");
    }
    const auto key =
        std::make_tuple(it->second, static_cast<int>(m.n), p.value("slice", std::int64_t{-1}),
                        format_index(source, p.value("format", std::string())));
    auto& acc = logs[key];
    acc.first += std::log(m.time_us);
    acc.second += 1;
    out.devices.insert(m.device);
  }
  for (const auto& [k, v] : logs)
    out.timings.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k),
                           std::exp(v.first / v.second)});
  return out;
}

}  // namespace sparsetune::models
