#pragma once
// Small matrices for the search tests, built by hand.
#include <cstdint>
#include <string>

#include "core/convert.hpp"
#include "core/matrix.hpp"

namespace search_test {

// n x n tridiagonal: every row at most 3 entries (a short-row, regular matrix).
inline sparsetune::Csr64 tridiagonal(std::int64_t n) {
  sparsetune::Coo64 c;
  c.rows = c.cols = n;
  for (std::int64_t r = 0; r < n; ++r)
    for (std::int64_t d = -1; d <= 1; ++d)
      if (r + d >= 0 && r + d < n) {
        c.row.push_back(r);
        c.col.push_back(r + d);
        c.val.push_back(d == 0 ? 4.0 : -1.0 + 0.001 * static_cast<double>(r % 7));
      }
  std::int64_t dup = 0;
  return sparsetune::coo_to_csr<std::int64_t, std::int64_t>(c, &dup);
}

// n x n with a few very long rows among short ones (an irregular matrix: row variance > 100).
inline sparsetune::Csr64 irregular(std::int64_t n) {
  sparsetune::Coo64 c;
  c.rows = c.cols = n;
  for (std::int64_t r = 0; r < n; ++r) {
    const std::int64_t len = r % 97 == 0 ? 300 : 1 + r % 5;
    for (std::int64_t k = 0; k < len; ++k) {
      c.row.push_back(r);
      c.col.push_back((r * 31 + k * 17) % n);
      c.val.push_back(0.5 + static_cast<double>((r + k) % 11));
    }
  }
  std::int64_t dup = 0;
  return sparsetune::coo_to_csr<std::int64_t, std::int64_t>(c, &dup);
}

}  // namespace search_test
