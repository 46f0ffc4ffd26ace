// Core containers, conversions, permutations and the fp64 reference kernels, checked against
// values worked out by hand.
#include <catch2/catch.hpp>
#include <random>

#include "core/convert.hpp"
#include "core/fingerprint.hpp"
#include "core/permute.hpp"
#include "core/reference.hpp"
#include "core/tensor.hpp"

using namespace sparsetune;

namespace {
// [[1 0 2],[0 0 0],[3 4 0]] given out of order with one duplicate (2 = 1.5 + 0.5).
Coo64 sample_coo() {
  Coo64 a;
  a.rows = 3;
  a.cols = 3;
  a.row = {2, 0, 2, 0, 0};
  a.col = {1, 2, 0, 0, 2};
  a.val = {4, 1.5, 3, 1, 0.5};
  return a;
}
}  // namespace

TEST_CASE("coo_to_csr sorts, sums duplicates and keeps empty rows", "[core]") {
  std::int64_t dups = -1;
  auto a = coo_to_csr<std::int64_t, std::int64_t>(sample_coo(), &dups);
  CHECK(dups == 1);
  CHECK(a.row_ptr == std::vector<std::int64_t>{0, 2, 2, 4});
  CHECK(a.col_idx == std::vector<std::int64_t>{0, 2, 0, 1});
  CHECK(a.val == std::vector<double>{1, 2, 3, 4});
}

TEST_CASE("explicit zeros are kept as entries", "[core]") {
  Coo64 z;
  z.rows = z.cols = 2;
  z.row = {0, 1};
  z.col = {1, 0};
  z.val = {0.0, 5.0};
  auto a = coo_to_csr<std::int32_t, std::int32_t>(z);
  CHECK(a.nnz() == 2);
  CHECK(a.val[0] == 0.0);
}

TEST_CASE("transpose, CSC and COO round trips", "[core]") {
  auto a = coo_to_csr<std::int64_t, std::int64_t>(sample_coo());
  auto t = transpose(a);
  CHECK(t.row_ptr == std::vector<std::int64_t>{0, 2, 3, 4});
  CHECK(t.col_idx == std::vector<std::int64_t>{0, 2, 2, 0});
  CHECK(t.val == std::vector<double>{1, 3, 4, 2});
  CHECK(same_matrix(transpose(t), a));
  CHECK(same_matrix(csc_to_csr(csr_to_csc(a)), a));
  CHECK(same_matrix(coo_to_csr<std::int64_t, std::int64_t>(csr_to_coo(a)), a));
}

TEST_CASE("index_cast narrows and refuses what does not fit", "[core]") {
  auto a = coo_to_csr<std::int64_t, std::int64_t>(sample_coo());
  auto b = index_cast<std::int32_t, std::int32_t>(a);
  CHECK(b.col_idx == std::vector<std::int32_t>{0, 2, 0, 1});
  Csr64 big;
  big.rows = std::int64_t{1} << 33;
  big.cols = 1;
  CHECK_THROWS_AS((index_cast<std::int32_t, std::int64_t>(big)), Error);
  CHECK(needs_64bit_offsets(std::int64_t{1} << 31));
  CHECK_FALSE(needs_64bit_offsets((std::int64_t{1} << 31) - 1));
}

TEST_CASE("row and column permutations", "[core]") {
  auto a = coo_to_csr<std::int64_t, std::int64_t>(sample_coo());
  auto pr = permute_rows(a, {2, 0, 1});  // rows: old 2, old 0, old 1
  CHECK(pr.row_ptr == std::vector<std::int64_t>{0, 2, 4, 4});
  CHECK(pr.col_idx == std::vector<std::int64_t>{0, 1, 0, 2});
  CHECK(pr.val == std::vector<double>{3, 4, 1, 2});
  auto pc = permute_cols(a, {2, 0, 1});  // new column 0 is old column 2
  CHECK(pc.col_idx == std::vector<std::int64_t>{0, 1, 1, 2});
  CHECK(pc.val == std::vector<double>{2, 1, 3, 4});
  CHECK_THROWS_AS(permute_rows(a, {0, 0, 1}), Error);
  CHECK_THROWS_AS(permute_cols(a, {0, 1}), Error);
}

TEST_CASE("reference SpMV and SpMM match hand-computed products", "[core]") {
  auto a = coo_to_csr<std::int64_t, std::int64_t>(sample_coo());
  CHECK(spmv_reference(a, {1, 2, 3}) == std::vector<double>{7, 0, 11});
  // B = [[1 2],[3 4],[5 6]]: C = [[11 14],[0 0],[15 22]].
  CHECK(spmm_reference(a, {1, 2, 3, 4, 5, 6}, 2) == std::vector<double>{11, 14, 0, 0, 15, 22});
  CHECK_THROWS_AS(spmv_reference(a, {1, 2}), Error);
  CHECK_THROWS_AS(spmm_reference(a, {1, 2, 3}, 2), Error);
}

TEST_CASE("a large reference SpMM, split over threads, is column by column the SpMV", "[core]") {
  // 4000 x 4000, about 64 entries a row, n = 160: 4 x 10^7 multiply-adds, enough to be split.
  // Small integers keep every sum exact, so the comparison is exact.
  std::mt19937_64 rng(7);
  Coo64 c;
  c.rows = c.cols = 4000;
  for (std::int64_t r = 0; r < c.rows; ++r)
    for (int k = 0; k < 64; ++k) {
      c.row.push_back(r);
      c.col.push_back(static_cast<std::int64_t>(rng() % 4000));
      c.val.push_back(static_cast<double>(rng() % 7) - 3.0 + (rng() % 2 == 0 ? 0.0 : 0.5));
    }
  const auto a = coo_to_csr<std::int64_t, std::int64_t>(c);
  const std::int64_t n = 160;
  std::vector<double> b(static_cast<std::size_t>(a.cols * n));
  for (auto& v : b) v = static_cast<double>(rng() % 9) - 4.0;
  const auto got = spmm_reference(a, b, n);
  for (std::int64_t j = 0; j < n; j += 17) {
    std::vector<double> x(static_cast<std::size_t>(a.cols));
    for (std::int64_t i = 0; i < a.cols; ++i) x[i] = b[i * n + j];
    const auto y = spmv_reference(a, x);
    for (std::int64_t r = 0; r < a.rows; ++r) REQUIRE(got[r * n + j] == y[r]);
  }
}

TEST_CASE("tensor sort, fibers, slices and SpTV", "[core][tensor]") {
  // 2x2x3 tensor: X(0,0,0)=1 X(0,0,2)=2 X(1,1,1)=3 X(0,1,0)=4 (given unsorted).
  SparseTensor x;
  x.dims = {2, 2, 3};
  x.idx = {{1, 0, 0, 0}, {1, 0, 1, 0}, {1, 2, 0, 0}};
  x.val = {3, 2, 4, 1};
  auto s = x;
  sort_by_modes(s, fiber_mode_order(3, 2));
  CHECK(s.val == std::vector<double>{1, 2, 4, 3});
  CHECK(fiber_ptr(s, 2) == std::vector<std::int64_t>{0, 2, 3, 4});
  sort_by_modes(s, slice_mode_order(3, 1));
  auto sl = slices(s, 1);
  CHECK(sl.index == std::vector<std::int64_t>{0, 1});
  CHECK(sl.ptr == std::vector<std::int64_t>{0, 2, 4});

  // Y = X x_3 v with v = (10, 20, 30): Y(0,0)=1*10+2*30=70, Y(0,1)=40, Y(1,1)=60.
  auto y = sptv_reference(x, 2, {10, 20, 30});
  CHECK(y.dims == std::vector<std::int64_t>{2, 2});
  CHECK(y.idx[0] == std::vector<std::int64_t>{0, 0, 1});
  CHECK(y.idx[1] == std::vector<std::int64_t>{0, 1, 1});
  CHECK(y.val == std::vector<double>{70, 40, 60});
  // Mode 0 with v = (1, 2): Y(0,0)=1, Y(0,2)=2, Y(1,0)=4, Y(1,1)=6.
  auto y0 = sptv_reference(x, 0, {1, 2});
  CHECK(y0.val == std::vector<double>{1, 2, 4, 6});
  CHECK_THROWS_AS(sptv_reference(x, 3, {1}), Error);
  CHECK_THROWS_AS(sptv_reference(x, 0, {1, 2, 3}), Error);
}

TEST_CASE("tensor duplicates are summed", "[core][tensor]") {
  SparseTensor x;
  x.dims = {2, 2, 2};
  x.idx = {{0, 0, 1}, {1, 1, 0}, {0, 0, 1}};
  x.val = {1, 2, 3};
  sort_by_modes(x, {0, 1, 2});
  CHECK(merge_duplicates(x) == 1);
  CHECK(x.val == std::vector<double>{3, 3});
}

TEST_CASE("relative L2 error", "[core]") {
  CHECK(relative_l2_error({1, 2}, {1, 2}) == 0.0);
  CHECK(relative_l2_error({3, 4}, {0, 0}) == Approx(5.0));
  CHECK(relative_l2_error({1, 1}, {1, 2}) == Approx(1.0 / std::sqrt(5.0)));
  CHECK(std::isinf(relative_l2_error({1}, {1, 2})));
}

TEST_CASE("fingerprints tell matrices apart and ignore index width", "[core]") {
  auto a = coo_to_csr<std::int64_t, std::int64_t>(sample_coo());
  auto b = index_cast<std::int32_t, std::int32_t>(a);
  CHECK(fingerprint(a) == fingerprint(b));
  CHECK(fingerprint(a).rfind("csr1-", 0) == 0);
  CHECK(fingerprint(a).size() == 21);
  auto c = a;
  c.val[2] = 3.0000001;
  CHECK(fingerprint(c) != fingerprint(a));
  auto d = a;
  d.cols = 4;
  CHECK(fingerprint(d) != fingerprint(a));
  auto e = permute_cols(a, {1, 0, 2});
  CHECK(fingerprint(e) != fingerprint(a));
}
