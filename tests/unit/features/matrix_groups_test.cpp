// AlphaSparse, LiteForm and MatXtract features of an 8 x 8 matrix whose row and column length
// distributions are worked out by hand below.
#include <catch2/catch.hpp>
#include <cmath>

#include "build_matrix.hpp"
#include "features/matrix_features.hpp"

using namespace sparsetune;
using namespace sparsetune::features;
using Catch::Detail::Approx;

namespace {
// Row lengths 1 0 8 2 1 3 1 2 (nnz 18): one empty row, one dense row.
// Column lengths 4 2 2 2 1 2 2 3.
Csr64 sample() {
  return test::csr_from_rows(
      8, {{0}, {}, {0, 1, 2, 3, 4, 5, 6, 7}, {1, 5}, {2}, {0, 3, 7}, {6}, {0, 7}});
}
}  // namespace

TEST_CASE("AlphaSparse features of a hand-checked matrix", "[features]") {
  const auto f = alphasparse_features(sample());
  CHECK(f.size() == 10);
  CHECK(feature_value(f, "rows") == 8);
  CHECK(feature_value(f, "cols") == 8);
  CHECK(feature_value(f, "nnz") == 18);
  CHECK(feature_value(f, "density") == Approx(18.0 / 64));
  CHECK(feature_value(f, "row_nnz_mean") == Approx(2.25));
  CHECK(feature_value(f, "row_nnz_min") == 0);
  CHECK(feature_value(f, "row_nnz_max") == 8);
  // Sum of squared lengths 84: 84 / 8 - 2.25^2 = 5.4375.
  CHECK(feature_value(f, "row_nnz_var") == Approx(5.4375));
  CHECK(feature_value(f, "empty_rows") == 1);
  CHECK(feature_value(f, "irregular") == 0);
  for (const auto& x : f) CHECK(x.group == "alphasparse");
}

TEST_CASE("AlphaSparse calls a matrix irregular above a row variance of 100", "[features]") {
  // Lengths 21 and 1: mean 11, variance 100 exactly -> regular; 22 and 0 -> 121, irregular.
  std::vector<std::int64_t> long_row, longer_row;
  for (int c = 0; c < 22; ++c) {
    if (c < 21) long_row.push_back(c);
    longer_row.push_back(c);
  }
  const auto regular = alphasparse_features(test::csr_from_rows(22, {long_row, {0}}));
  CHECK(feature_value(regular, "row_nnz_var") == Approx(100.0));
  CHECK(feature_value(regular, "irregular") == 0);
  const auto irregular = alphasparse_features(test::csr_from_rows(22, {longer_row, {}}));
  CHECK(feature_value(irregular, "row_nnz_var") == Approx(121.0));
  CHECK(feature_value(irregular, "irregular") == 1);
}

TEST_CASE("LiteForm Table 2 and Table 3 features", "[features]") {
  const auto a = sample();
  const double std_len = std::sqrt(5.4375);
  const auto cell = liteform_cell_features(a);
  REQUIRE(cell.size() == 7);
  const char* names2[] = {"rows",        "cols",        "nnz",        "row_nnz_mean",
                          "row_nnz_min", "row_nnz_max", "row_nnz_std"};
  const double values2[] = {8, 8, 18, 2.25, 0, 8, std_len};
  for (int i = 0; i < 7; ++i) {
    CHECK(cell[i].name == names2[i]);
    CHECK(cell[i].value == Approx(values2[i]));
  }
  // Per-row density is length / 8.
  const auto part = liteform_partition_features(a, 128);
  REQUIRE(part.size() == 8);
  const char* names3[] = {"rows",
                          "cols",
                          "nnz",
                          "row_density_mean",
                          "row_density_min",
                          "row_density_max",
                          "row_density_std",
                          "dense_cols"};
  const double values3[] = {8, 8, 18, 2.25 / 8, 0, 1, std_len / 8, 128};
  for (int i = 0; i < 8; ++i) {
    CHECK(part[i].name == names3[i]);
    CHECK(part[i].value == Approx(values3[i]));
  }
  CHECK_THROWS_AS(liteform_partition_features(a, 0), Error);
  const auto all = liteform_features(a);
  CHECK(all.size() == 11);
  CHECK(feature_value(all, "row_density_std") == Approx(std_len / 8));
}

TEST_CASE("LiteForm similarity metrics, eq. (1) and (2)", "[features]") {
  CHECK(partition_similarity(4, 4) == 1.0);
  CHECK(partition_similarity(4, 2) == Approx(0.5));
  CHECK(partition_similarity(2, 8) == Approx(0.25));
  CHECK(partition_similarity(0, 0) == 1.0);
  CHECK_THROWS_AS(partition_similarity(-1, 2), Error);
  // (1, 2, 2) . (2, 2, 1) = 8; both norms 3.
  CHECK(partition_cosine_similarity({1, 2, 2}, {2, 2, 1}) == Approx(8.0 / 9));
  CHECK(partition_cosine_similarity({1, 2}, {2, 4}) == Approx(1.0));
  CHECK(partition_cosine_similarity({0, 0}, {1, 2}) == 0.0);
  CHECK_THROWS_AS(partition_cosine_similarity({1}, {1, 2}), Error);
}

TEST_CASE("MatXtract Table 2 features of a hand-checked matrix", "[features]") {
  const auto f = matxtract_features(sample());
  CHECK(f.size() == 3 + 2 * (5 + 10 + 9));
  CHECK(feature_value(f, "rows") == 8);
  CHECK(feature_value(f, "cols") == 8);
  CHECK(feature_value(f, "nnz") == 18);
  // Rows: lengths 8 3 2 2 1 1 1 0 sorted, mean 2.25.
  CHECK(feature_value(f, "row_nnz_mean") == Approx(2.25));
  CHECK(feature_value(f, "row_nnz_std") == Approx(std::sqrt(5.4375)));
  CHECK(feature_value(f, "row_nnz_min") == 0);
  CHECK(feature_value(f, "row_nnz_max") == 8);
  CHECK(feature_value(f, "row_pratio") == 8);  // the empty row counts as length 1
  CHECK(feature_value(f, "row_top1") == Approx(8 / 2.25));
  CHECK(feature_value(f, "row_top2") == Approx(3 / 2.25));
  CHECK(feature_value(f, "row_top3") == Approx(2 / 2.25));
  CHECK(feature_value(f, "row_top4") == Approx(2 / 2.25));
  CHECK(feature_value(f, "row_top5") == Approx(1 / 2.25));
  CHECK(feature_value(f, "row_top10") == 0);  // fewer than 10 rows
  CHECK(feature_value(f, "row_top300") == 0);
  // Longest-first prefix sums 8 11 13 15 16 17 18 18; HotR = fewest rows reaching R% of 18.
  const int row_hot[] = {1, 1, 1, 1, 2, 2, 3, 4, 6};
  for (int i = 0; i < 9; ++i)
    CHECK(feature_value(f, "row_hot" + std::to_string(10 * (i + 1))) == Approx(row_hot[i] / 8.0));
  // Columns: lengths 4 3 2 2 2 2 2 1, sum of squares 46: variance 46 / 8 - 2.25^2 = 0.6875.
  CHECK(feature_value(f, "col_nnz_mean") == Approx(2.25));
  CHECK(feature_value(f, "col_nnz_std") == Approx(std::sqrt(0.6875)));
  CHECK(feature_value(f, "col_nnz_min") == 1);
  CHECK(feature_value(f, "col_nnz_max") == 4);
  CHECK(feature_value(f, "col_pratio") == 4);
  CHECK(feature_value(f, "col_top1") == Approx(4 / 2.25));
  CHECK(feature_value(f, "col_top2") == Approx(3 / 2.25));
  CHECK(feature_value(f, "col_top5") == Approx(2 / 2.25));
  CHECK(feature_value(f, "col_top10") == 0);
  // Prefix sums 4 7 9 11 13 15 17 18; Hot50 needs 9 of 18 exactly: 3 columns.
  const int col_hot[] = {1, 1, 2, 3, 3, 4, 5, 6, 7};
  for (int i = 0; i < 9; ++i)
    CHECK(feature_value(f, "col_hot" + std::to_string(10 * (i + 1))) == Approx(col_hot[i] / 8.0));
}

TEST_CASE("matrix_features holds every group, each once", "[features]") {
  const auto f = matrix_features(sample());
  CHECK(select_group(f, "alphasparse").size() == 10);
  CHECK(select_group(f, "liteform").size() == 11);
  CHECK(select_group(f, "matxtract").size() == 51);
  CHECK(select_group(f, "permutation").size() == 24);
  CHECK(f.size() == 96);
  CHECK(feature_value(f, "row_nnz_var", "alphasparse") == Approx(5.4375));
  CHECK(feature_value(f, "col_hot50", "matxtract") == Approx(3 / 8.0));
  CHECK_THROWS_AS(feature_value(f, "row_nnz_var", "liteform"), Error);
  // Same values as the per-group functions.
  const auto m = matxtract_features(sample());
  CHECK(feature_values(select_group(f, "matxtract")) == feature_values(m));
}

TEST_CASE("feature_names lists one group's keys in matrix_features' order", "[features]") {
  const auto perm = features::feature_names(features::kPermutation);
  REQUIRE(perm.size() == 24);  // Table II of the row-permutation paper
  CHECK(perm.front() == "permutation.rows");
  const auto mx = features::feature_names(features::kMatXtract);
  CHECK(mx.size() > 10);
  for (const auto& n : mx) CHECK(n.rfind("matxtract.", 0) == 0);
  CHECK(features::feature_names("no-such-group").empty());
}
