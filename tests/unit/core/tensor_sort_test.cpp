// The radix sorts behind sort_by_modes: the same order as a serial comparison sort, whatever the
// thread count, and the same tensor as the comparison sort on random tensors of orders 3 to 5.
#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <random>

#include "core/radix_sort.hpp"
#include "core/tensor.hpp"

using namespace sparsetune;

namespace {
// Many repeated coordinates (small dims) so that stability is visible in the values.
SparseTensor random_tensor(const std::vector<std::int64_t>& dims, std::int64_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  SparseTensor t;
  t.dims = dims;
  t.idx.resize(dims.size());
  for (std::int64_t k = 0; k < n; ++k) {
    for (std::size_t m = 0; m < dims.size(); ++m)
      t.idx[m].push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(dims[m])));
    t.val.push_back(static_cast<double>(k));  // the entry's number: shows its original place
  }
  return t;
}

// The order a stable comparison sort gives.
SparseTensor comparison_sorted(SparseTensor t, const std::vector<int>& mode_order) {
  std::vector<std::int64_t> perm(t.nnz());
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](std::int64_t a, std::int64_t b) {
    for (int m : mode_order)
      if (t.idx[m][a] != t.idx[m][b]) return t.idx[m][a] < t.idx[m][b];
    return false;
  });
  SparseTensor s = t;
  for (std::size_t k = 0; k < perm.size(); ++k) {
    for (int m = 0; m < t.order(); ++m) s.idx[m][k] = t.idx[m][perm[k]];
    s.val[k] = t.val[perm[k]];
  }
  return s;
}
}  // namespace

TEST_CASE("radix sort: stable, and the same for every thread count", "[core][sort]") {
  std::mt19937_64 rng(5);
  for (std::uint64_t max_key : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{2047},
                                std::uint64_t{1} << 40, ~std::uint64_t{0}}) {
    INFO("max key " << max_key);
    std::vector<std::uint64_t> keys(50000);
    for (auto& k : keys) k = max_key == 0 ? 0 : rng() % (max_key / 2 + 1) * 2;  // repeats too
    std::vector<std::int64_t> order(keys.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::int64_t a, std::int64_t b) { return keys[a] < keys[b]; });
    for (int threads : {1, 2, 3, 8}) {
      INFO(threads << " threads");
      auto k = keys;
      std::vector<std::int64_t> items(keys.size());
      std::iota(items.begin(), items.end(), 0);
      stable_sort_by_key(k, items, max_key, threads);
      CHECK(items == order);
      CHECK(std::is_sorted(k.begin(), k.end()));
    }
  }
  std::vector<std::uint64_t> keys(3);
  std::vector<std::int64_t> items(2);
  CHECK_THROWS(stable_sort_by_key(keys, items, 1));
}

TEST_CASE("sort_by_modes matches a stable comparison sort", "[core][sort]") {
  // 3 * 10^5 entries: several threads where the machine has the cores.
  const std::vector<std::vector<std::int64_t>> shapes = {
      {5, 300, 7}, {512, 200000, 100000}, {3, 4, 5, 6}, {2, 3, 2, 3, 2}};
  unsigned seed = 1;
  for (const auto& dims : shapes) {
    const std::int64_t n = dims.size() == 3 ? 300000 : 20000;
    const SparseTensor t = random_tensor(dims, n, seed++);
    const int order = t.order();
    for (int mode = 0; mode < order; ++mode)
      for (const auto& mo : {fiber_mode_order(order, mode), slice_mode_order(order, mode)}) {
        INFO("order " << order << ", mode " << mode);
        SparseTensor s = t;
        sort_by_modes(s, mo);
        const SparseTensor r = comparison_sorted(t, mo);
        CHECK(s.idx == r.idx);
        CHECK(s.val == r.val);
        CHECK(is_sorted_by_modes(s, mo));
        // Small dims hold repeats: sorted, but not strictly.
        CHECK(is_sorted_by_modes(s, mo, true) == (dims[1] == 200000));
      }
  }
  // Indices too large to pack into one 64-bit key take one radix sort per group of modes.
  SparseTensor big;
  big.dims = {std::int64_t{1} << 40, std::int64_t{1} << 40, 3};
  const std::int64_t far = std::int64_t{1} << 39;
  big.idx = {{5, 5, far, 5}, {far, 2, far, 3}, {2, 1, 0, 2}};
  big.val = {0, 1, 2, 3};
  sort_by_modes(big, {2, 0, 1});
  CHECK(big.val == std::vector<double>{2, 1, 3, 0});
  SparseTensor negative = big;
  negative.idx[1][0] = -1;
  CHECK_THROWS(sorted_order(negative, {0, 1, 2}));
}

TEST_CASE("merge_duplicates sums repeats in sorted order, and leaves a tensor without any alone",
          "[core][sort]") {
  SparseTensor t = random_tensor({4, 5, 6}, 2000, 9);
  sort_by_modes(t, {0, 1, 2});
  SparseTensor expected = t;
  {  // a plain serial merge
    std::int64_t out = 0;
    for (std::int64_t k = 0; k < expected.nnz(); ++k) {
      bool same = out > 0;
      for (int m = 0; m < 3 && same; ++m) same = expected.idx[m][k] == expected.idx[m][out - 1];
      if (same) {
        expected.val[out - 1] += expected.val[k];
        continue;
      }
      for (int m = 0; m < 3; ++m) expected.idx[m][out] = expected.idx[m][k];
      expected.val[out++] = expected.val[k];
    }
    for (auto& c : expected.idx) c.resize(out);
    expected.val.resize(out);
  }
  const std::int64_t removed = merge_duplicates(t);
  CHECK(removed == 2000 - expected.nnz());
  CHECK(removed > 0);
  CHECK(t.idx == expected.idx);
  CHECK(t.val == expected.val);
  CHECK(merge_duplicates(t) == 0);
  CHECK(t.val == expected.val);
}
