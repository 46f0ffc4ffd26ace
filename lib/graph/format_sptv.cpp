// The SpTV slice table of a format binary: three arrays and one metadata entry.
#include <algorithm>

#include "core/sptv_matrix.hpp"
#include "graph/format.hpp"

namespace sparsetune::graph {

void pack_sptv(const Format& f, io::SafetensorsFile& s) {
  const auto& t = f.sptv;
  s.metadata["sptv"] = nlohmann::json{{"dims", t.dims},
                                      {"mode", t.mode},
                                      {"slice_mode", t.slice_mode},
                                      {"y_order", t.y_order},
                                      {"formats", {"CSR", "COO", "ELL", "HYB", "Dense"}}}
                           .dump();
  io::add_array(s, "htf.slice_idx", t.slice_idx);
  io::add_array(s, "htf.slice_nnz", t.slice_nnz);
  io::add_array(s, "htf.slice_format", t.slice_format);
}

void unpack_sptv(const io::SafetensorsFile& s, Format& f, const std::string& source) {
  auto bad = [&](const std::string& what) { return InputError(source, 0, "sptv: " + what); };
  auto it = s.metadata.find("sptv");
  if (it == s.metadata.end()) throw bad("metadata has no 'sptv'");
  const auto j = nlohmann::json::parse(it->second);
  auto& t = f.sptv;
  for (const auto& d : j.at("dims")) {
    if (!d.is_number_integer() || d.get<std::int64_t>() < 0) throw bad("bad dims");
    t.dims.push_back(d.get<std::int64_t>());
  }
  if (!j.at("mode").is_number_integer() || !j.at("slice_mode").is_number_integer())
    throw bad("mode and slice_mode must be integers");
  t.mode = j.at("mode").get<int>();
  t.slice_mode = j.at("slice_mode").get<int>();
  const int order = static_cast<int>(t.dims.size());
  if (t.mode < 0 || t.mode >= order || t.slice_mode < 0 || t.slice_mode >= order ||
      t.mode == t.slice_mode)
    throw bad("mode or slice_mode out of range");
  if (t.dims[t.mode] != f.cols) throw bad("the mode's size is not the matrix's column count");
  // y's order: slice by slice since it was recorded; lexicographic in binaries before that.
  auto lexicographic = fiber_mode_order(order, t.mode);
  lexicographic.pop_back();  // the remaining modes ascending, without `mode` itself
  const auto slice_major = sptv_output_order(order, t.mode, t.slice_mode);
  if (j.contains("y_order")) {
    const auto& y = j.at("y_order");
    if (!y.is_array()) throw bad("y_order must be an array of modes");
    for (const auto& k : y) {
      if (!k.is_number_integer()) throw bad("y_order must be an array of modes");
      t.y_order.push_back(k.get<int>());
    }
    if (t.y_order != slice_major && t.y_order != lexicographic)
      throw bad("y_order must be the modes other than 'mode', ascending or the slice mode first");
  } else {
    t.y_order = lexicographic;
  }
  for (const char* name : {"htf.slice_idx", "htf.slice_nnz", "htf.slice_format"})
    if (!s.find(name)) throw bad(std::string("array ") + name + " is missing");
  t.slice_idx = io::get_int_array(s, "htf.slice_idx");
  t.slice_nnz = io::get_int_array(s, "htf.slice_nnz");
  t.slice_format = io::get_int_array(s, "htf.slice_format");
  const std::size_t n = t.slice_idx.size();
  if (t.slice_nnz.size() != n + 1 || t.slice_format.size() != n)
    throw bad("slice arrays of inconsistent lengths");
  for (std::size_t i = 0; i < n; ++i) {
    if (t.slice_idx[i] < 0 || t.slice_idx[i] >= t.dims[t.slice_mode] ||
        (i > 0 && t.slice_idx[i] <= t.slice_idx[i - 1]))
      throw bad("htf.slice_idx is not ascending inside the slice mode");
    if (t.slice_format[i] < 0 || t.slice_format[i] > 4) throw bad("htf.slice_format out of range");
  }
  if (t.slice_nnz[0] != 0 || t.slice_nnz[n] != f.nnz ||
      !std::is_sorted(t.slice_nnz.begin(), t.slice_nnz.end()))
    throw bad("htf.slice_nnz does not count the entries slice by slice");
}

}  // namespace sparsetune::graph
