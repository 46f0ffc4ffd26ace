#pragma once
// Helpers of the host benchmarks under tests/bench.
#include <chrono>
#include <sstream>
#include <string>
#include <vector>

namespace sparsetune::bench {

// Seconds since `t`, which moves to now: one step's time each call.
inline double since(std::chrono::steady_clock::time_point& t) {
  const auto now = std::chrono::steady_clock::now();
  const double s = std::chrono::duration<double>(now - t).count();
  t = now;
  return s;
}

// "CSR,COO" -> {"CSR", "COO"}.
inline std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string w; std::getline(in, w, ',');) out.push_back(w);
  return out;
}

}  // namespace sparsetune::bench
