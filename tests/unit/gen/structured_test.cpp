#include "gen/structured.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "checks.hpp"
#include "core/error.hpp"

using namespace sparsetune;
using namespace sparsetune::gen;

TEST_CASE("dense band has the exact entry count", "[gen][banded]") {
  // n = 10, lower 2, upper 3: 10 * 6 - 3 - 6 = 51.
  const auto a = banded({10, 2, 3, 1.0}, 1);
  gen_test::require_well_formed(a);
  CHECK(a.nnz() == 51);
  CHECK(banded_dense_nnz(10, 2, 3) == 51);
  for (std::int64_t i = 0; i < 10; ++i)
    for (std::int64_t j = 0; j < 10; ++j) {
      const bool in_band = j >= i - 2 && j <= i + 3;
      REQUIRE((gen_test::value_at(a, i, j) != 0.0) == in_band);
    }
  // Diagonal = off-diagonal count + 1 and off-diagonals <= 1: strictly diagonally dominant.
  CHECK(gen_test::value_at(a, 5, 5) == 6.0);
  CHECK(gen_test::value_at(a, 0, 0) == 4.0);
  // A band wider than the matrix is the dense matrix.
  CHECK(banded({7, 100, 100, 1.0}, 1).nnz() == 49);
  CHECK(banded({7, 0, 0, 1.0}, 1).nnz() == 7);
}

TEST_CASE("partly filled band keeps about fill of its off-diagonal positions", "[gen][banded]") {
  const std::int64_t n = 20000, b = 10;
  const auto a = banded({n, b, b, 0.3}, 2);
  gen_test::require_well_formed(a);
  const double off = static_cast<double>(banded_dense_nnz(n, b, b) - n);
  CHECK(std::abs((a.nnz() - n) - off * 0.3) < 5 * std::sqrt(off * 0.3 * 0.7));
  for (std::int64_t i = 0; i < n; ++i) {
    REQUIRE(gen_test::value_at(a, i, i) == static_cast<double>(a.row_length(i)));
    REQUIRE(a.col_idx[a.row_ptr[i]] >= i - b);
    REQUIRE(a.col_idx[a.row_ptr[i + 1] - 1] <= i + b);
  }
  CHECK(gen_test::identical(banded({500, 3, 3, 0.5}, 4), banded({500, 3, 3, 0.5}, 4)));
  CHECK_FALSE(gen_test::identical(banded({500, 3, 3, 0.5}, 4), banded({500, 3, 3, 0.5}, 5)));
  CHECK_THROWS_WITH(banded({10, 1, 1, 1.5}, 1), Catch::Contains("fill"));
  CHECK_THROWS_WITH(banded({10, -1, 1, 1.0}, 1), Catch::Contains("lower"));
  CHECK_THROWS_WITH(banded({0, 1, 1, 1.0}, 1), Catch::Contains("n must"));
}

TEST_CASE("block diagonal has the sum of squared block sizes", "[gen][blockdiag]") {
  BlockDiagParams p;
  p.block_sizes = {3, 5};
  p.blocks = 5;  // 3, 5, 3, 5, 3
  const auto a = block_diagonal(p, 1);
  gen_test::require_well_formed(a);
  CHECK(a.rows == 19);
  CHECK(a.nnz() == 9 + 25 + 9 + 25 + 9);
  CHECK(block_layout(p) == std::vector<std::int64_t>{3, 5, 3, 5, 3});
  // Rows 3..7 form the second block.
  CHECK(a.col_idx[a.row_ptr[4]] == 3);
  CHECK(a.row_length(4) == 5);

  BlockDiagParams q;
  q.block_sizes = {4};
  q.n = 10;  // 4, 4, 2
  CHECK(block_layout(q) == std::vector<std::int64_t>{4, 4, 2});
  CHECK(block_diagonal(q, 1).nnz() == 16 + 16 + 4);
}

TEST_CASE("block diagonal with shuffled columns keeps each block's rows on one column set",
          "[gen][blockdiag]") {
  BlockDiagParams p;
  p.block_sizes = {8};
  p.blocks = 40;
  const auto plain = block_diagonal(p, 5);
  p.shuffle_columns = true;
  const auto a = block_diagonal(p, 5);
  gen_test::require_well_formed(a);  // rows sorted, columns in range
  REQUIRE(a.nnz() == plain.nnz());
  // The same entries, only their columns moved: each row holds the same values.
  for (std::int64_t r = 0; r < a.rows; ++r) {
    std::vector<double> x(a.val.begin() + a.row_ptr[r], a.val.begin() + a.row_ptr[r + 1]);
    std::vector<double> y(plain.val.begin() + plain.row_ptr[r],
                          plain.val.begin() + plain.row_ptr[r + 1]);
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    REQUIRE(x == y);
  }
  // Every block's 8 rows share one set of 8 columns; the sets of the 40 blocks partition the
  // 320 columns (a permutation); and they are not the blocks' own columns any more.
  std::vector<int> seen(320, 0);
  int moved = 0;
  for (std::int64_t b = 0; b < 40; ++b) {
    const std::vector<std::int64_t> cols(a.col_idx.begin() + a.row_ptr[8 * b],
                                         a.col_idx.begin() + a.row_ptr[8 * b + 1]);
    REQUIRE(cols.size() == 8);
    for (std::int64_t r = 8 * b; r < 8 * b + 8; ++r)
      CHECK(std::vector<std::int64_t>(a.col_idx.begin() + a.row_ptr[r],
                                      a.col_idx.begin() + a.row_ptr[r + 1]) == cols);
    for (auto c : cols) ++seen[static_cast<std::size_t>(c)];
    moved += cols.front() != 8 * b;
  }
  for (int k : seen) CHECK(k == 1);
  CHECK(moved >= 30);
  // Deterministic for a seed, another order for another seed.
  CHECK(block_diagonal(p, 5).col_idx == a.col_idx);
  CHECK(block_diagonal(p, 6).col_idx != a.col_idx);
}

TEST_CASE("block diagonal noise lands outside the blocks at the asked density",
          "[gen][blockdiag]") {
  BlockDiagParams p;
  p.block_sizes = {8};
  p.blocks = 250;
  p.noise = 0.002;
  const auto a = block_diagonal(p, 3);
  gen_test::require_well_formed(a);
  const double n = 2000, inside = 250 * 64, off = n * n - inside;
  std::int64_t outside = 0;
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) outside += a.col_idx[k] / 8 != i / 8;
  CHECK(a.nnz() - outside == static_cast<std::int64_t>(inside));
  CHECK(std::abs(outside - off * 0.002) < 5 * std::sqrt(off * 0.002 * 0.998));
  CHECK(gen_test::identical(block_diagonal(p, 3), block_diagonal(p, 3)));
  CHECK_FALSE(gen_test::identical(block_diagonal(p, 3), block_diagonal(p, 4)));
}

TEST_CASE("block diagonal rejects contradictory or empty layouts", "[gen][blockdiag]") {
  BlockDiagParams p;
  CHECK_THROWS_WITH(block_diagonal(p, 1), Catch::Contains("blocks or n"));
  p.blocks = 2;
  p.n = 10;
  CHECK_THROWS_WITH(block_diagonal(p, 1), Catch::Contains("not both"));
  p.n = 0;
  p.block_sizes = {0};
  CHECK_THROWS_WITH(block_diagonal(p, 1), Catch::Contains("block_size"));
  p.block_sizes = {2};
  p.noise = 2;
  CHECK_THROWS_WITH(block_diagonal(p, 1), Catch::Contains("noise"));
}
