#include <algorithm>
#include <cstdio>

#include "cli.hpp"

namespace sparsetune::cli {

void print_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& r : rows)
    for (std::size_t c = 0; c < r.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], r[c].size());
    }
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t c = 0; c < r.size(); ++c) {
      line += r[c];
      if (c + 1 < r.size()) line += std::string(width[c] - r[c].size() + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
  }
}

void print_json(const nlohmann::json& j) { std::printf("%s\n", j.dump(2).c_str()); }

std::string fixed(double v, int digits) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

std::string sci(double v, int digits) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*e", digits, v);
  return b;
}

}  // namespace sparsetune::cli
