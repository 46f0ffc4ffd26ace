#pragma once
// Small matrices for the feature tests, written row by row.
#include <cstdint>
#include <vector>

#include "core/convert.hpp"
#include "core/matrix.hpp"

namespace sparsetune::test {

// CSR of a rows x cols matrix whose row r holds the columns cols_of_row[r] (value 1 each).
inline Csr64 csr_from_rows(std::int64_t cols, const std::vector<std::vector<std::int64_t>>& rows) {
  Coo64 c;
  c.rows = static_cast<std::int64_t>(rows.size());
  c.cols = cols;
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (auto col : rows[r]) {
      c.row.push_back(static_cast<std::int64_t>(r));
      c.col.push_back(col);
      c.val.push_back(1.0);
    }
  return coo_to_csr<std::int64_t, std::int64_t>(c);
}

}  // namespace sparsetune::test
