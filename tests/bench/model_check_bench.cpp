// Times what loading an XGBoost booster costs before XGBoost reads it: the tree check
// (models::xgb::check_model: a JSON document, or a walk of UBJSON bytes), against parsing the
// same bytes into an nlohmann::json document, the way the check read UBJSON before. Median of
// RUNS (default 5) each.
//   bench_model_check BOOSTER [BOOSTER ...]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "io/file_bytes.hpp"
#include "models/xgb_booster.hpp"

using namespace sparsetune;

namespace {
template <class F>
double median_ms(F&& f, int runs) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(bench::since(t0) * 1e3);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_model_check BOOSTER [BOOSTER ...]\n");
    return 2;
  }
  const int runs = 5;
  std::printf("%-40s %10s %12s %14s\n", "booster", "MB", "check ms", "document ms");
  for (int i = 1; i < argc; ++i) {
    try {
      const std::string bytes = io::read_file(argv[i]);
      const double check = median_ms([&] { models::xgb::check_model(bytes, argv[i]); }, runs);
      const double doc = median_ms(
          [&] {
            auto j = nlohmann::json::parse(bytes, nullptr, false);
            if (j.is_discarded()) j = nlohmann::json::from_ubjson(bytes);
          },
          runs);
      std::printf("%-40s %10.2f %12.1f %14.1f\n", argv[i], bytes.size() / 1e6, check, doc);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", argv[i], e.what());
      return 1;
    }
  }
  return 0;
}
