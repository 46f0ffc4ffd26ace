// `sparsetune tune T.tns --op sptv --mode K`: prints what search::tune_sptv did.
#include "cli.hpp"
#include "search/sptv_tune.hpp"

namespace sparsetune::cli {

void run_tune_sptv(const search::SptvTuneOptions& o, const GlobalOptions& g) {
  const auto r = search::tune_sptv(o);
  const auto& j = r.report;
  if (g.json) return print_json(j);
  std::string dims;
  for (const auto& d : j["tensor"]["dims"]) dims += (dims.empty() ? "" : " x ") + d.dump();
  std::string by;
  for (const auto& [k, v] : j["selection"]["by_format"].items())
    if (v.get<int>() > 0) by += (by.empty() ? "" : ", ") + std::to_string(v.get<int>()) + " " + k;
  std::vector<std::vector<std::string>> rows = {
      {"tensor", o.tensor + " (" + dims + ", " + j["tensor"]["nnz"].dump() + " entries)"},
      {"sptv",
       "Y = X x_" + std::to_string(o.mode) + " v, slices along mode " + j["slice_mode"].dump()},
      {"slices", j["selection"]["slices"].dump() + " non-empty: " + (by.empty() ? "none" : by)},
      {"predictor", j["selection"]["predictor"].get<std::string>()},
      {"graph", j["graph_line"].get<std::string>()},
      {"cpu check", "relative error " + sci(j["cpu_check"]["error"].get<double>()) +
                        " (tolerance " + sci(j["cpu_check"]["tolerance"].get<double>()) + ")"},
      {"compiled", "NVRTC " + j["compile"]["nvrtc"].get<std::string>() + " for " +
                       j["compile"]["arch"].get<std::string>()}};
  const auto& gpu = j["gpu"];
  if (gpu.value("ran", false))
    rows.push_back({"gpu", "verified against the fp64 reference, relative error " +
                               sci(gpu.value("error", 0.0))});
  else
    rows.push_back({"gpu", gpu.value("note", std::string("not run"))});
  for (const auto& f : j["files"]) rows.push_back({"wrote", f.get<std::string>()});
  print_table(rows);
}

}  // namespace sparsetune::cli
