// Properties every feature set must keep: finite values on degenerate shapes, invariance under
// the permutations that cannot change a feature, and the row/column symmetry of MatXtract.
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>
#include <random>

#include "build_matrix.hpp"
#include "core/permute.hpp"
#include "features/matrix_features.hpp"

using namespace sparsetune;
using namespace sparsetune::features;
using Catch::Detail::Approx;

namespace {
void check_finite(const std::vector<Feature>& f) {
  for (const auto& x : f) {
    INFO(x.group << "." << x.name);
    CHECK(std::isfinite(x.value));
  }
}

Csr64 random_matrix(std::uint64_t seed, std::int64_t rows, std::int64_t cols, double fill) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<std::vector<std::int64_t>> r(rows);
  for (std::int64_t i = 0; i < rows; ++i) {
    const double row_fill = u(rng) < 0.1 ? 0.5 : fill;  // some long rows for skew
    for (std::int64_t c = 0; c < cols; ++c)
      if (u(rng) < row_fill) r[i].push_back(c);
  }
  return test::csr_from_rows(cols, r);
}

std::vector<std::int64_t> shuffled(std::int64_t n, std::uint64_t seed) {
  std::vector<std::int64_t> p(n);
  std::iota(p.begin(), p.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(p.begin(), p.end(), rng);
  return p;
}
}  // namespace

TEST_CASE("an all-empty matrix gives finite features", "[features]") {
  Csr64 a;
  a.rows = 5;
  a.cols = 7;
  a.row_ptr.assign(6, 0);
  const auto f = matrix_features(a);
  check_finite(f);
  CHECK(feature_value(f, "nnz", "alphasparse") == 0);
  CHECK(feature_value(f, "empty_rows", "alphasparse") == 5);
  CHECK(feature_value(f, "row_hot50", "matxtract") == 0);
  CHECK(feature_value(f, "col_top1", "matxtract") == 0);
  CHECK(feature_value(f, "warp_load_max", "permutation") == 0);
  CHECK(feature_value(f, "same_cache_lines_min", "permutation") == 0);

  Csr64 none;  // 0 x 0
  none.row_ptr = {0};
  check_finite(matrix_features(none));
}

TEST_CASE("a 1 x 1 matrix", "[features]") {
  const auto f = matrix_features(test::csr_from_rows(1, {{0}}));
  check_finite(f);
  CHECK(feature_value(f, "density", "alphasparse") == 1);
  CHECK(feature_value(f, "row_nnz_var", "alphasparse") == 0);
  CHECK(feature_value(f, "row_top1", "matxtract") == 1);
  CHECK(feature_value(f, "row_top2", "matxtract") == 0);
  CHECK(feature_value(f, "row_hot90", "matxtract") == 1);
  CHECK(feature_value(f, "col_pratio", "matxtract") == 1);
  CHECK(feature_value(f, "warp_load_mean", "permutation") == 1);
  CHECK(feature_value(f, "adjacent_vector_distance_max", "permutation") == 0);
}

TEST_CASE("rectangular matrices keep rows and columns apart", "[features]") {
  // 2 x 5: row 0 full, row 1 one entry in column 4.
  const auto f = matrix_features(test::csr_from_rows(5, {{0, 1, 2, 3, 4}, {4}}));
  check_finite(f);
  CHECK(feature_value(f, "row_nnz_max", "matxtract") == 5);
  CHECK(feature_value(f, "col_nnz_max", "matxtract") == 2);
  CHECK(feature_value(f, "col_nnz_mean", "matxtract") == Approx(6.0 / 5));
  CHECK(feature_value(f, "row_density_max", "liteform") == Approx(1.0));
  CHECK(feature_value(f, "row_density_min", "liteform") == Approx(0.2));
  // MatXtract of the transpose swaps the row and column halves.
  const auto a = random_matrix(3, 61, 17, 0.1);
  const auto m = matxtract_features(a);
  const auto t = matxtract_features(transpose(a));
  for (const auto& x : m) {
    if (x.name == "nnz") continue;
    std::string swapped = x.name;
    if (x.name == "rows")
      swapped = "cols";
    else if (x.name == "cols")
      swapped = "rows";
    else if (x.name.rfind("row_", 0) == 0)
      swapped = "col_" + x.name.substr(4);
    else
      swapped = "row_" + x.name.substr(4);
    INFO(x.name);
    CHECK(x.value == Approx(feature_value(t, swapped)));
  }
}

TEST_CASE("row permutations keep length statistics and move the locality ones", "[features]") {
  const auto a = random_matrix(11, 200, 300, 0.02);
  const auto b = permute_rows(a, shuffled(a.rows, 5));
  const auto fa = matrix_features(a), fb = matrix_features(b);
  for (auto g : {kAlphaSparse, kLiteForm, kMatXtract})
    CHECK(feature_values(select_group(fa, g)) == feature_values(select_group(fb, g)));
  for (auto name : {"nnz_per_row_min", "nnz_per_row_mean", "nnz_per_row_max",
                    "nnz_blocks_per_row_mean", "same_cache_lines_mean", "same_cache_lines_max"})
    CHECK(feature_value(fa, name, "permutation") == Approx(feature_value(fb, name, "permutation")));
  CHECK(feature_value(fa, "adjacent_vector_distance_mean", "permutation") !=
        Approx(feature_value(fb, "adjacent_vector_distance_mean", "permutation")));

  // 64 x 64, rows 0 and 32 full (warp load 2 each, both on warp 0), every other row one entry:
  // warp 0 carries 4. Swapping rows 1 and 32 leaves warps 0 and 1 with 2 + 1 each.
  std::vector<std::vector<std::int64_t>> rows(64);
  for (std::int64_t r = 0; r < 64; ++r) rows[r] = {r};
  std::vector<std::int64_t> full(64);
  std::iota(full.begin(), full.end(), 0);
  rows[0] = rows[32] = full;
  const auto skewed = test::csr_from_rows(64, rows);
  std::vector<std::int64_t> swap(64);
  std::iota(swap.begin(), swap.end(), 0);
  std::swap(swap[1], swap[32]);
  const auto before = permutation_features(skewed);
  const auto after = permutation_features(permute_rows(skewed, swap));
  CHECK(feature_value(before, "warp_load_max") == 4);
  CHECK(feature_value(after, "warp_load_max") == 3);
  CHECK(feature_value(before, "warp_load_mean") == Approx(66.0 / 32));
  CHECK(feature_value(after, "warp_load_mean") == Approx(66.0 / 32));
}

TEST_CASE("column permutations inside a cache line change nothing", "[features]") {
  const auto a = random_matrix(13, 90, 128, 0.05);
  std::vector<std::int64_t> p(a.cols);
  std::iota(p.begin(), p.end(), 0);
  std::mt19937_64 rng(2);
  for (std::int64_t l = 0; l < a.cols; l += 32)
    std::shuffle(p.begin() + l, p.begin() + std::min<std::int64_t>(l + 32, a.cols), rng);
  const auto fa = matrix_features(a), fb = matrix_features(permute_cols(a, p));
  CHECK(feature_values(fa) == feature_values(fb));
  // Across lines, the line-based features move but the length statistics stay.
  const auto fc = matrix_features(permute_cols(a, shuffled(a.cols, 9)));
  for (auto g : {kAlphaSparse, kLiteForm, kMatXtract})
    CHECK(feature_values(select_group(fa, g)) == feature_values(select_group(fc, g)));
}

TEST_CASE("a malformed CSR is refused", "[features]") {
  auto a = test::csr_from_rows(4, {{0, 1}, {3}});
  auto bad_col = a;
  bad_col.col_idx[2] = 4;
  CHECK_THROWS_AS(matrix_features(bad_col), Error);
  auto bad_ptr = a;
  bad_ptr.row_ptr = {0, 3, 2};
  CHECK_THROWS_AS(matrix_features(bad_ptr), Error);
  auto short_ptr = a;
  short_ptr.row_ptr.pop_back();
  CHECK_THROWS_AS(permutation_features(short_ptr), Error);
}

TEST_CASE("a very long row and a very wide matrix take the compact paths", "[features]") {
  // One row of 20000 entries among 3 short ones (histogram sorted, not counted densely), in a
  // matrix 10^12 columns wide (column counts taken from a sorted copy).
  std::vector<std::vector<std::int64_t>> rows(4);
  for (std::int64_t c = 0; c < 20000; ++c) rows[0].push_back(c * 50000000);
  rows[1] = {7};
  rows[2] = {7, 999999999999};
  const auto f = matrix_features(test::csr_from_rows(1000000000000, rows));
  check_finite(f);
  CHECK(feature_value(f, "row_nnz_max", "matxtract") == 20000);
  CHECK(feature_value(f, "row_pratio", "matxtract") == 20000);
  CHECK(feature_value(f, "row_hot50", "matxtract") == Approx(0.25));
  // Column 7 is the only one used twice; line 0 (columns 0-31) is read by all three rows.
  CHECK(feature_value(f, "col_nnz_max", "matxtract") == 2);
  CHECK(feature_value(f, "col_nnz_min", "matxtract") == 0);
  CHECK(feature_value(f, "col_top1", "matxtract") == Approx(2 / (20003.0 / 1e12)));
  CHECK(feature_value(f, "same_cache_lines_min", "permutation") == 0);
  CHECK(feature_value(f, "same_cache_lines_max", "permutation") == 3);
}
