// The cost model's row sample: small matrices pass through, large ones give evenly spread windows
// of whole rows with the entry ratio as scale.
#include "search/row_sample.hpp"

#include <catch2/catch.hpp>

#include "core/convert.hpp"

using namespace sparsetune;
using sparsetune::search::sample_rows;

namespace {
// rows x rows matrix whose row r holds (r % 5) + 1 entries at columns r, r+1, ... (mod rows).
Csr64 banded_like(std::int64_t rows) {
  Coo64 c;
  c.rows = c.cols = rows;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t k = 0; k <= r % 5; ++k) {
      c.row.push_back(r);
      c.col.push_back((r + k) % rows);
      c.val.push_back(static_cast<double>(r * 10 + k));
    }
  return coo_to_csr<std::int64_t, std::int64_t>(c);
}
}  // namespace

TEST_CASE("small matrices are not sampled", "[search][sample]") {
  auto a = banded_like(100);  // 300 entries
  auto s = sample_rows(a, 300);
  CHECK(s.scale == 1.0);
  CHECK(same_matrix(s.matrix, a));
}

TEST_CASE("large matrices give windows of whole rows and the entry ratio", "[search][sample]") {
  auto a = banded_like(10000);  // 30000 entries: rows of 1..5 entries
  auto s = sample_rows(a, 3000, 10);
  const auto& m = s.matrix;
  CHECK(m.cols == a.cols);
  CHECK(m.nnz() >= 3000);
  CHECK(m.nnz() <= 3000 + 10 * 5);  // each window overshoots by less than one row
  CHECK(s.scale == Approx(30000.0 / m.nnz()));
  // Each sampled row equals some row of `a`: value r*10 + k identifies its source row r, and the
  // first window starts at row 0, the second at row 1000.
  REQUIRE(m.rows > 0);
  CHECK(m.val[0] == 0.0);
  std::int64_t second_window_row = -1;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const auto src = static_cast<std::int64_t>(m.val[m.row_ptr[r]]) / 10;
    CHECK(m.row_length(r) == a.row_length(src));
    if (src >= 1000 && second_window_row < 0) second_window_row = src;
  }
  CHECK(second_window_row == 1000);
}
