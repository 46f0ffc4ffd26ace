// The SpTV view and the fp64 reference are built on every core for large tensors: the same
// arrays, bit for bit, on one thread and on several, and the same as a plain serial construction
// (a comparison sort and one loop) written here.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <numeric>
#include <random>

#include "core/reference.hpp"
#include "core/sptv_matrix.hpp"

using namespace sparsetune;

namespace {
SparseTensor random_tensor(const std::vector<std::int64_t>& dims, std::int64_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  SparseTensor t;
  t.dims = dims;
  t.idx.resize(dims.size());
  for (std::int64_t k = 0; k < n; ++k) {
    for (std::size_t m = 0; m < dims.size(); ++m)
      t.idx[m].push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(dims[m])));
    t.val.push_back(value(rng));
  }
  return t;
}

// Runs `f` with the parallel steps limited to `threads` threads.
template <class F>
auto with_threads(int threads, F&& f) {
  ::setenv("SPARSETUNE_THREADS", std::to_string(threads).c_str(), 1);
  auto r = f();
  ::unsetenv("SPARSETUNE_THREADS");
  return r;
}

// The view the plain way: a sorted copy, repeats summed, one pass for the fibers.
SptvMatrix serial_view(SparseTensor t, int mode, int slice_mode) {
  auto order = sptv_output_order(t.order(), mode, slice_mode);
  order.push_back(mode);
  std::vector<std::int64_t> perm(t.nnz());
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](std::int64_t a, std::int64_t b) {
    for (int m : order)
      if (t.idx[m][a] != t.idx[m][b]) return t.idx[m][a] < t.idx[m][b];
    return false;
  });
  SptvMatrix v;
  v.dims = t.dims;
  v.mode = mode;
  v.slice_mode = slice_mode;
  v.slices = t.dims[slice_mode];
  v.a.cols = t.dims[mode];
  auto same = [&](std::int64_t a, std::int64_t b, int skip) {
    for (int m = 0; m < t.order(); ++m)
      if (m != skip && t.idx[m][a] != t.idx[m][b]) return false;
    return true;
  };
  for (std::size_t k = 0; k < perm.size(); ++k) {
    const std::int64_t e = perm[k];
    if (k > 0 && same(e, perm[k - 1], -1)) {
      v.a.val.back() += t.val[e];
      continue;
    }
    if (k == 0 || !same(e, perm[k - 1], mode)) {
      v.a.row_ptr.push_back(static_cast<std::int64_t>(v.a.col_idx.size()));
      v.row_slice.push_back(t.idx[slice_mode][e]);
    }
    v.a.col_idx.push_back(t.idx[mode][e]);
    v.a.val.push_back(t.val[e]);
  }
  v.a.row_ptr.push_back(static_cast<std::int64_t>(v.a.col_idx.size()));
  v.a.rows = static_cast<std::int64_t>(v.a.row_ptr.size()) - 1;
  return v;
}

void check_same(const SptvMatrix& a, const SptvMatrix& b) {
  CHECK(a.a.rows == b.a.rows);
  CHECK(a.a.cols == b.a.cols);
  CHECK(a.a.row_ptr == b.a.row_ptr);
  CHECK(a.a.col_idx == b.a.col_idx);
  CHECK(a.a.val == b.a.val);  // exact: the same additions in the same order
  CHECK(a.row_slice == b.row_slice);
  CHECK(a.slices == b.slices);
}
}  // namespace

TEST_CASE("the SpTV view is the same on 1 and on 7 threads, and the serial construction's",
          "[core][sptv][parallel]") {
  // 2 * 10^5 entries of order 3 (several threads), and a tensor full of repeated coordinates.
  for (const auto& [dims, n] : {std::pair{std::vector<std::int64_t>{40, 3000, 900}, 200000},
                                std::pair{std::vector<std::int64_t>{6, 7, 5, 4}, 150000}}) {
    const SparseTensor t = random_tensor(dims, n, static_cast<unsigned>(dims.size()));
    for (int mode = 0; mode < t.order(); ++mode) {
      INFO("order " << t.order() << ", mode " << mode);
      const int slice_mode = default_slice_mode(t, mode);
      const SptvMatrix one = with_threads(1, [&] { return sptv_matrix(t, mode); });
      const SptvMatrix many = with_threads(7, [&] { return sptv_matrix(t, mode); });
      check_same(one, many);
      check_same(one, serial_view(t, mode, slice_mode));

      // The reference in the view's order: one value per row of the view, the same on any
      // thread count, and equal to the row sums of the view up to rounding (repeats are summed
      // before the product there).
      std::vector<double> v(t.dims[mode]);
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = 1.0 + 0.25 * static_cast<double>(i % 7);
      const SparseTensor y1 =
          with_threads(1, [&] { return sptv_reference_in_view_order(t, mode, slice_mode, v); });
      const SparseTensor y7 =
          with_threads(7, [&] { return sptv_reference_in_view_order(t, mode, slice_mode, v); });
      CHECK(y1.idx == y7.idx);
      CHECK(y1.val == y7.val);
      REQUIRE(y1.nnz() == one.a.rows);
      const auto rows = spmv_reference(one.a, v);
      CHECK(relative_l2_error(y1.val, rows) < 1e-14);
      // The slice mode's index of every row of y is the view's row_slice.
      const int y_slice = slice_mode - (slice_mode > mode ? 1 : 0);
      CHECK(y1.idx[y_slice] == one.row_slice);
    }
  }
}

TEST_CASE("sptv_reference sums each fiber like the plain loop", "[core][sptv][parallel]") {
  const SparseTensor t = random_tensor({30, 20, 25}, 9000, 4);
  std::vector<double> v(t.dims[1], 0.0);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i) - 7.5;
  const SparseTensor y = with_threads(5, [&] { return sptv_reference(t, 1, v); });
  // Plain: a map from the (i, k) fiber to its sum, in the order of X's entries sorted by (i, k, j).
  std::vector<std::int64_t> perm(t.nnz());
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](std::int64_t a, std::int64_t b) {
    return std::tie(t.idx[0][a], t.idx[2][a], t.idx[1][a]) <
           std::tie(t.idx[0][b], t.idx[2][b], t.idx[1][b]);
  });
  std::vector<double> sums;
  std::vector<std::int64_t> i0, i2;
  for (std::size_t k = 0; k < perm.size(); ++k) {
    const auto e = perm[k];
    if (k == 0 || t.idx[0][e] != i0.back() || t.idx[2][e] != i2.back()) {
      i0.push_back(t.idx[0][e]);
      i2.push_back(t.idx[2][e]);
      sums.push_back(0.0);
    }
    sums.back() += t.val[e] * v[t.idx[1][e]];
  }
  CHECK(y.dims == std::vector<std::int64_t>{30, 25});
  CHECK(y.idx[0] == i0);
  CHECK(y.idx[1] == i2);
  CHECK(y.val == sums);
  CHECK_THROWS_WITH(sptv_reference(t, 1, v, {0}), Catch::Contains("every mode but 1"));
}
