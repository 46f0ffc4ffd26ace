// IAP-SpTV's 9 global features of a 3 x 2 x 4 tensor, whole and by slices, worked out by hand.
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "features/tensor_features.hpp"

using namespace sparsetune;
using namespace sparsetune::features;
using Catch::Detail::Approx;

namespace {
// Entries (i, j, k): (0,0,0) (0,0,3) (0,1,3) (2,0,1) (2,1,1) (2,1,2) (2,1,3); slice i = 1 empty.
// Given out of order to show the features do not depend on it.
SparseTensor sample() {
  SparseTensor t;
  t.dims = {3, 2, 4};
  t.idx = {{2, 0, 2, 0, 2, 0, 2}, {1, 0, 0, 1, 1, 0, 1}, {3, 3, 1, 3, 1, 0, 2}};
  t.val = {1, 2, 3, 4, 5, 6, 7};
  return t;
}

void check9(const std::vector<Feature>& f, const std::vector<double>& expect) {
  const char* names[] = {"rows",         "cols",        "nnz",
                         "row_nnz_mean", "row_nnz_max", "row_nnz_min",
                         "col_nnz_mean", "col_nnz_max", "col_nnz_min"};
  REQUIRE(f.size() == 9);
  for (int i = 0; i < 9; ++i) {
    INFO(names[i]);
    CHECK(f[i].name == names[i]);
    CHECK(f[i].group == "iap_sptv");
    CHECK(f[i].value == Approx(expect[i]));
  }
}
}  // namespace

TEST_CASE("global features of a whole tensor", "[features]") {
  // Rows are the 6 (i, j) fibers along k: lengths 2 1 0 0 1 3. Columns k: 1 2 1 3.
  check9(tensor_features(sample()), {6, 4, 7, 7.0 / 6, 3, 0, 7.0 / 4, 3, 1});
  // Along j instead: rows are the 12 (i, k) pairs, 5 of them used (lengths 1 2 2 1 1);
  // columns j: 3 and 4.
  check9(tensor_features(sample(), 1), {12, 2, 7, 7.0 / 12, 2, 0, 3.5, 4, 3});
}

TEST_CASE("global features of each slice", "[features]") {
  const auto s = slice_features(sample(), 0);
  REQUIRE(s.size() == 2);  // slice 1 has no entries
  CHECK(s[0].index == 0);
  CHECK(s[1].index == 2);
  // Slice 0, 2 x 4: (0,0) (0,3) (1,3): rows 2 1, columns 1 0 0 2.
  check9(s[0].features, {2, 4, 3, 1.5, 2, 1, 0.75, 2, 0});
  // Slice 2: (0,1) (1,1) (1,2) (1,3): rows 1 3, columns 0 2 1 1.
  check9(s[1].features, {2, 4, 4, 2, 3, 1, 1, 2, 0});

  // Slices along k, columns j (the default: last mode other than k), rows i.
  const auto k = slice_features(sample(), 2);
  REQUIRE(k.size() == 4);
  check9(k[0].features, {3, 2, 1, 1.0 / 3, 1, 0, 0.5, 1, 0});  // (0,0)
  check9(k[3].features, {3, 2, 3, 1, 2, 0, 1.5, 2, 1});        // (0,0) (0,1) (2,1)
  // Columns along i instead: slice k = 3 is then 2 x 3 with rows j (1 2), columns i (2 0 1).
  const auto ki = slice_features(sample(), 2, 0);
  check9(ki[3].features, {2, 3, 3, 1.5, 2, 1, 1, 2, 0});
}

TEST_CASE("tensor features of degenerate and malformed tensors", "[features]") {
  SparseTensor empty;
  empty.dims = {4, 5, 6};
  empty.idx.resize(3);
  check9(tensor_features(empty), {20, 6, 0, 0, 0, 0, 0, 0, 0});
  CHECK(slice_features(empty, 0).empty());

  const auto t = sample();
  CHECK_THROWS_AS(slice_features(t, 3), Error);
  CHECK_THROWS_AS(slice_features(t, 1, 1), Error);
  CHECK_THROWS_AS(tensor_features(t, -2), Error);
  auto out_of_range = t;
  out_of_range.idx[1][0] = 2;
  CHECK_THROWS_AS(tensor_features(out_of_range), Error);
  auto ragged = t;
  ragged.idx[2].pop_back();
  CHECK_THROWS_AS(slice_features(ragged, 0), Error);
}
