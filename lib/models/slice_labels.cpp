#include "models/slice_labels.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>

#include "core/error.hpp"
#include "io/file_bytes.hpp"
#include "models/slice_gcn.hpp"

namespace sparsetune::models {

std::vector<SliceLabel> label_slices(const std::vector<SliceTiming>& t, double tie_tolerance) {
  if (!(tie_tolerance >= 0) || !std::isfinite(tie_tolerance))
    throw Error("slice labels: the tie tolerance must be 0 or more");
  std::map<std::tuple<std::string, int, std::int64_t>, std::vector<std::pair<double, int>>> by;
  for (const auto& r : t)
    if (std::isfinite(r.time_us) && r.time_us > 0)
      by[{r.tensor, r.mode, r.slice}].push_back({r.time_us, r.format});
  std::vector<SliceLabel> out;
  for (auto& [k, times] : by) {
    std::sort(times.begin(), times.end());
    SliceLabel l;
    std::tie(l.tensor, l.mode, l.slice) = k;
    l.time_us.fill(std::numeric_limits<double>::infinity());
    for (const auto& [us, f] : times)
      if (f >= 0 && f < kSliceFormats) l.time_us[f] = std::min(l.time_us[f], us);
    l.fastest = times[0].second;
    l.format = l.fastest;
    for (const auto& [us, f] : times)
      if (us <= times[0].first * (1 + tie_tolerance)) l.format = std::min(l.format, f);
    l.measured = static_cast<int>(times.size());
    l.margin = times.size() > 1 ? times[1].first / times[0].first : 1.0;
    out.push_back(std::move(l));
  }
  return out;
}

std::string slice_key(const std::string& tensor, int mode, std::int64_t slice) {
  return std::filesystem::path(tensor).filename().string() + ":" + std::to_string(mode) + ":" +
         std::to_string(slice);
}

double time_ratio(const SliceLabel& l, int format) {
  if (format < 0 || format >= kSliceFormats) return std::numeric_limits<double>::infinity();
  const double best = l.time_us[static_cast<std::size_t>(l.fastest)];
  return l.time_us[static_cast<std::size_t>(format)] / best;
}

std::vector<SliceTiming> read_slice_timings(const std::string& path) {
  // The shipped labels are gzip (slice-timings.csv.gz); read_file_decompressed takes either form.
  std::istringstream in(io::read_file_decompressed(path));
  std::vector<SliceTiming> out;
  std::map<std::string, std::int64_t> first_line;  // slice and format -> its line
  std::string line;
  std::int64_t n = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    if (!header && !f.empty() && f[0] == "tensor") {
      header = true;
      continue;
    }
    if (f.size() != 5)
      throw InputError(path, n, "expected 5 fields: tensor,mode,slice,format,time_us");
    SliceTiming r;
    r.tensor = f[0];
    const char* field = "mode";
    try {
      std::size_t used = 0;
      r.mode = std::stoi(f[1], &used);
      if (used != f[1].size() || r.mode < 0) throw std::invalid_argument(field);
      field = "slice";
      r.slice = std::stoll(f[2], &used);
      if (used != f[2].size() || r.slice < 0) throw std::invalid_argument(field);
      field = "time_us";
      r.time_us = std::stod(f[4], &used);
      if (used != f[4].size()) throw std::invalid_argument(field);
    } catch (const std::exception&) {
      throw InputError(path, n, std::string("field ") + field + " is not a valid number");
    }
    const auto& names = slice_format_classes();
    const auto it = std::find(names.begin(), names.end(), f[3]);
    if (it == names.end())
      throw InputError(path, n, "field format '" + f[3] + "' is not CSR, COO, ELL, HYB or Dense");
    r.format = static_cast<int>(it - names.begin());
    // One time per (slice, format) in a file: a repeat would be averaged in as a second
    // collection by merge and counted twice by training. Collections are separate files.
    const auto key = slice_key(r.tensor, r.mode, r.slice) + ":" + f[3];
    if (const auto [at, fresh] = first_line.emplace(key, n); !fresh)
      throw InputError(
          path, n,
          "repeats the time of " + key + " of line " + std::to_string(at->second) +
              " (one time per slice and format; collections go in files of their own)");
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<SliceTiming> merge_slice_timings(
    const std::vector<std::vector<SliceTiming>>& collections) {
  // Tensors are matched by file name, as slice_key matches them across machines; each is named
  // as the first collection that timed it names it.
  std::map<std::string, std::string> name_of;
  std::map<std::tuple<std::string, int, std::int64_t, int>, std::pair<double, int>> logs;
  for (const auto& c : collections)
    for (const auto& r : c)
      if (std::isfinite(r.time_us) && r.time_us > 0) {
        const auto file = std::filesystem::path(r.tensor).filename().string();
        name_of.emplace(file, r.tensor);
        auto& [sum, n] = logs[{file, r.mode, r.slice, r.format}];
        sum += std::log(r.time_us);
        ++n;
      }
  std::vector<SliceTiming> out;
  out.reserve(logs.size());
  for (const auto& [k, v] : logs) {
    SliceTiming r;
    std::tie(r.tensor, r.mode, r.slice, r.format) = k;
    r.tensor = name_of.at(r.tensor);
    r.time_us = std::exp(v.first / v.second);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<SliceLabel> read_slice_labels(const std::string& path, double tie_tolerance) {
  auto labels = label_slices(read_slice_timings(path), tie_tolerance);
  if (labels.empty()) throw InputError(path, 0, "no slice timing with a positive, finite time_us");
  return labels;
}

}  // namespace sparsetune::models
