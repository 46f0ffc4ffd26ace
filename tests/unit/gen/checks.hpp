#pragma once
// Structural checks shared by the generator tests.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>

#include "core/convert.hpp"
#include "core/matrix.hpp"

namespace gen_test {

// row_ptr well formed, columns in range and strictly increasing per row (sorted, no duplicates),
// values finite and non-zero.
inline void require_well_formed(const sparsetune::Csr64& a) {
  REQUIRE(static_cast<std::int64_t>(a.row_ptr.size()) == a.rows + 1);
  REQUIRE(a.row_ptr.front() == 0);
  REQUIRE(a.row_ptr.back() == a.nnz());
  REQUIRE(a.col_idx.size() == a.val.size());
  bool ok = true;
  for (std::int64_t r = 0; r < a.rows && ok; ++r) {
    ok = a.row_ptr[r] <= a.row_ptr[r + 1];
    for (auto k = a.row_ptr[r]; k < a.row_ptr[r + 1] && ok; ++k) {
      ok = a.col_idx[k] >= 0 && a.col_idx[k] < a.cols && std::isfinite(a.val[k]) && a.val[k] != 0;
      if (k > a.row_ptr[r]) ok = ok && a.col_idx[k - 1] < a.col_idx[k];
    }
    if (!ok) INFO("first bad row " << r);
  }
  REQUIRE(ok);
}

// Pattern and values equal to the transpose's.
inline bool symmetric(const sparsetune::Csr64& a) {
  return a.rows == a.cols && sparsetune::same_matrix(a, sparsetune::transpose(a));
}

inline bool identical(const sparsetune::Csr64& a, const sparsetune::Csr64& b) {
  return sparsetune::same_matrix(a, b) && a.val == b.val;
}

inline double value_at(const sparsetune::Csr64& a, std::int64_t r, std::int64_t c) {
  for (auto k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k)
    if (a.col_idx[k] == c) return a.val[k];
  return 0.0;
}

}  // namespace gen_test
