// The 24 row-permutation features (ISPASS'21 Table II): a 40-row matrix worked out by hand, and
// random matrices against a direct, set-based transcription of the definitions.
#include <algorithm>
#include <catch2/catch.hpp>
#include <random>

#include "build_matrix.hpp"
#include "features/matrix_features.hpp"
#include "naive_features.hpp"

using namespace sparsetune;
using namespace sparsetune::features;
using Catch::Detail::Approx;

namespace {
// 40 x 100: four 32-column lines (0-31, 32-63, 64-95, 96-99).
//   row 0: columns 0..39 (40 entries, lines {0,1}); row 1: empty;
//   row 32: columns 0, 64, 96 (lines {0,2,3}); row 33: column 33 (line {1});
//   every other row i: column i (line i / 32).
// Warps 0..31 take rows w and w + 32; only warps 0..7 get a second row.
Csr64 forty_rows() {
  std::vector<std::vector<std::int64_t>> rows(40);
  for (int c = 0; c < 40; ++c) rows[0].push_back(c);
  for (int r = 2; r < 40; ++r) rows[r] = {r};
  rows[32] = {0, 64, 96};
  rows[33] = {33};
  return test::csr_from_rows(100, rows);
}

Csr64 random_matrix(std::mt19937_64& rng, std::int64_t rows, std::int64_t cols, double fill,
                    std::int64_t long_rows) {
  std::vector<std::vector<std::int64_t>> r(rows);
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<std::int64_t> pick_col(0, cols - 1), pick_row(0, rows - 1);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t c = 0; c < cols && fill > 0; ++c)
      if (u(rng) < fill) r[i].push_back(c);
  for (std::int64_t k = 0; k < long_rows; ++k) {  // a few long rows, some folded across warps
    auto& row = r[pick_row(rng)];
    for (int j = 0; j < 150; ++j) row.push_back(pick_col(rng));
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
  }
  return test::csr_from_rows(cols, r);
}
}  // namespace

TEST_CASE("permutation features of a hand-checked 40-row matrix", "[features]") {
  const auto f = permutation_features(forty_rows());
  REQUIRE(f.size() == 24);
  for (const auto& x : f) CHECK(x.group == "permutation");
  CHECK(feature_value(f, "rows") == 40);
  CHECK(feature_value(f, "cols") == 100);
  CHECK(feature_value(f, "density") == Approx(80.0 / 4000));  // nnz 40 + 3 + 1 + 36
  CHECK(feature_value(f, "nnz_per_row_min") == 0);
  CHECK(feature_value(f, "nnz_per_row_mean") == Approx(2.0));
  CHECK(feature_value(f, "nnz_per_row_max") == 40);
  // Lines per row: 2, 0, 3, 1 and 36 rows of 1 -> 42 in all.
  CHECK(feature_value(f, "nnz_blocks_per_row_min") == 0);
  CHECK(feature_value(f, "nnz_blocks_per_row_mean") == Approx(42.0 / 40));
  CHECK(feature_value(f, "nnz_blocks_per_row_max") == 3);
  // Warp load, ceil(len / 32) summed per warp: w0 2 + 1, w1 0 + 1, w2..7 1 + 1, w8..31 1.
  CHECK(feature_value(f, "warp_load_min") == 1);
  CHECK(feature_value(f, "warp_load_mean") == Approx((3 + 1 + 6 * 2 + 24) / 32.0));
  CHECK(feature_value(f, "warp_load_max") == 3);
  // Rows requesting each line: line 0 rows 0, 32 and 2..31 (32); line 1 rows 0, 33, 34..39 (8);
  // lines 2 and 3 row 32 only.
  CHECK(feature_value(f, "same_cache_lines_min") == 1);
  CHECK(feature_value(f, "same_cache_lines_mean") == Approx(42.0 / 4));
  CHECK(feature_value(f, "same_cache_lines_max") == 32);
  // Distinct lines per warp: w0 {0,1} u {0,2,3} = 4, w1 {1} = 1, w2..7 {0} u {1} = 2, w8..31 1.
  CHECK(feature_value(f, "distinct_cache_lines_per_warp_min") == 1);
  CHECK(feature_value(f, "distinct_cache_lines_per_warp_mean") == Approx((4 + 1 + 12 + 24) / 32.0));
  CHECK(feature_value(f, "distinct_cache_lines_per_warp_max") == 4);
  // All lines per warp: w0 2 + 3, w1 0 + 1, w2..7 1 + 1, w8..31 1.
  CHECK(feature_value(f, "total_cache_lines_per_warp_min") == 1);
  CHECK(feature_value(f, "total_cache_lines_per_warp_mean") == Approx(42.0 / 32));
  CHECK(feature_value(f, "total_cache_lines_per_warp_max") == 5);
  // Adjacent masks: (0,1) 2, (1,2) 1, (31,32) {0} vs {0,2,3} 2, (32,33) {0,2,3} vs {1} 4, the
  // other 35 pairs 0: 9 over 39 pairs.
  CHECK(feature_value(f, "adjacent_vector_distance_min") == 0);
  CHECK(feature_value(f, "adjacent_vector_distance_mean") == Approx(9.0 / 39));
  CHECK(feature_value(f, "adjacent_vector_distance_max") == 4);
}

TEST_CASE("permutation features agree with the set-based definition", "[features]") {
  std::mt19937_64 rng(7);
  struct Shape {
    std::int64_t rows, cols;
    double fill;
    std::int64_t long_rows;
  };
  // Fewer rows than warps, lines cut short by the last column, long rows, and a matrix wide
  // enough for the line slots to be compressed.
  const Shape shapes[] = {{5, 40, 0.2, 0},    {33, 33, 0.1, 1},   {100, 257, 0.03, 3},
                          {300, 64, 0.05, 5}, {70, 500000, 0, 4}, {64, 2000, 0.001, 0}};
  for (const auto& s : shapes) {
    const Csr64 a = random_matrix(rng, s.rows, s.cols, s.fill, s.long_rows);
    const auto expect = test::naive_permutation_features(a);
    const auto got = permutation_features(a);
    INFO("shape " << s.rows << " x " << s.cols << ", nnz " << a.nnz());
    REQUIRE(got.size() == expect.size());
    for (const auto& x : got) {
      INFO(x.name);
      CHECK(x.value == Approx(expect.at(x.name)));
    }
  }
}
