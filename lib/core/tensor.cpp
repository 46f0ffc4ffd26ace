#include "core/tensor.hpp"

#include <algorithm>
#include <atomic>
#include <numeric>
#include <string>
#include <type_traits>

#include "core/error.hpp"
#include "core/parallel_for.hpp"
#include "core/radix_sort.hpp"

namespace sparsetune {

namespace {
void check_mode(const SparseTensor& t, int mode) {
  if (mode < 0 || mode >= t.order())
    throw Error("mode " + std::to_string(mode) + " out of range for an order-" +
                std::to_string(t.order()) + " tensor");
}

bool same_except(const SparseTensor& t, std::int64_t a, std::int64_t b, int skip) {
  for (int m = 0; m < t.order(); ++m)
    if (m != skip && t.idx[m][a] != t.idx[m][b]) return false;
  return true;
}
}  // namespace

std::vector<int> fiber_mode_order(int order, int mode) {
  std::vector<int> o;
  for (int m = 0; m < order; ++m)
    if (m != mode) o.push_back(m);
  o.push_back(mode);
  return o;
}

std::vector<int> slice_mode_order(int order, int mode) {
  std::vector<int> o{mode};
  for (int m = 0; m < order; ++m)
    if (m != mode) o.push_back(m);
  return o;
}

std::vector<std::int64_t> sorted_order(const SparseTensor& t, const std::vector<int>& mode_order) {
  const std::int64_t n = t.nnz();
  const int threads = threads_for(n * t.order());
  std::vector<std::int64_t> perm(n);
  parallel_ranges(n, threads, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t k = lo; k < hi; ++k) perm[k] = k;
  });
  // Each mode's span (largest index + 1), so that coordinates pack into as few keys as possible.
  std::vector<std::uint64_t> span(t.order(), 1);
  for (int m : mode_order) {
    std::vector<std::int64_t> lo_of(threads, 0), hi_of(threads, -1);
    parallel_for(threads, threads, [&](int p) {
      for (std::int64_t k = n * p / threads; k < n * (p + 1) / threads; ++k) {
        lo_of[p] = std::min(lo_of[p], t.idx[m][k]);
        hi_of[p] = std::max(hi_of[p], t.idx[m][k]);
      }
    });
    if (*std::min_element(lo_of.begin(), lo_of.end()) < 0)
      throw Error("sort: mode " + std::to_string(m) + " holds a negative index");
    span[m] = static_cast<std::uint64_t>(*std::max_element(hi_of.begin(), hi_of.end())) + 1;
  }
  // Least significant group of modes first: each group's coordinates packed into one key that
  // fits 64 bits, each radix sort stable, so later groups keep the order of earlier ones.
  std::vector<std::uint64_t> keys(n);
  int hi = static_cast<int>(mode_order.size());
  while (hi > 0) {
    int lo = hi - 1;
    std::uint64_t range = span[mode_order[lo]];
    while (lo > 0 && range <= UINT64_MAX / span[mode_order[lo - 1]])
      range *= span[mode_order[--lo]];
    parallel_ranges(n, threads, [&](std::int64_t a, std::int64_t b) {
      for (std::int64_t k = a; k < b; ++k) {
        std::uint64_t key = 0;
        for (int i = lo; i < hi; ++i)
          key =
              key * span[mode_order[i]] + static_cast<std::uint64_t>(t.idx[mode_order[i]][perm[k]]);
        keys[k] = key;
      }
    });
    stable_sort_by_key(keys, perm, range - 1, threads);
    hi = lo;
  }
  return perm;
}

void sort_by_modes(SparseTensor& t, const std::vector<int>& mode_order) {
  if (is_sorted_by_modes(t, mode_order)) return;
  const std::int64_t n = t.nnz();
  const auto perm = sorted_order(t, mode_order);
  const int threads = threads_for(n);
  const auto gather = [&](auto& column) {
    std::remove_reference_t<decltype(column)> c(n);
    parallel_ranges(n, threads, [&](std::int64_t lo, std::int64_t hi) {
      for (std::int64_t k = lo; k < hi; ++k) c[k] = column[perm[k]];
    });
    column.swap(c);
  };
  for (auto& column : t.idx) gather(column);
  gather(t.val);
}

bool is_sorted_by_modes(const SparseTensor& t, const std::vector<int>& mode_order, bool strict) {
  const std::int64_t n = t.nnz();
  const int threads = threads_for(n * t.order());
  std::vector<char> ok(threads, 1);
  parallel_for(threads, threads, [&](int p) {
    const std::int64_t lo = std::max<std::int64_t>(1, n * p / threads);
    for (std::int64_t k = lo; k < n * (p + 1) / threads; ++k) {
      int c = 0;  // -1, 0, 1: entry k - 1 before, equal to, after entry k
      for (int m : mode_order)
        if (t.idx[m][k - 1] != t.idx[m][k]) {
          c = t.idx[m][k - 1] < t.idx[m][k] ? -1 : 1;
          break;
        }
      if (c > 0 || (strict && c == 0)) {
        ok[p] = 0;
        return;
      }
    }
  });
  return std::all_of(ok.begin(), ok.end(), [](char c) { return c != 0; });
}

std::int64_t merge_duplicates(SparseTensor& t) {
  // Most tensors hold none: find the first before moving anything.
  std::int64_t first = t.nnz();
  {
    const std::int64_t n = t.nnz();
    const int threads = threads_for(n * t.order());
    std::vector<std::int64_t> first_of(threads, n);
    parallel_for(threads, threads, [&](int p) {
      for (std::int64_t k = std::max<std::int64_t>(1, n * p / threads); k < n * (p + 1) / threads;
           ++k)
        if (same_except(t, k, k - 1, -1)) {
          first_of[p] = k;
          return;
        }
    });
    first = *std::min_element(first_of.begin(), first_of.end());
  }
  if (first == t.nnz()) return 0;
  std::int64_t out = first;
  for (std::int64_t k = first; k < t.nnz(); ++k) {
    if (out > 0 && same_except(t, k, out - 1, -1)) {
      t.val[out - 1] += t.val[k];
      continue;
    }
    for (auto& column : t.idx) column[out] = column[k];
    t.val[out] = t.val[k];
    ++out;
  }
  const std::int64_t removed = t.nnz() - out;
  for (auto& column : t.idx) column.resize(out);
  t.val.resize(out);
  return removed;
}

std::vector<std::int64_t> fiber_ptr(const SparseTensor& sorted, int mode) {
  check_mode(sorted, mode);
  std::vector<std::int64_t> ptr;
  for (std::int64_t k = 0; k < sorted.nnz(); ++k)
    if (k == 0 || !same_except(sorted, k, k - 1, mode)) ptr.push_back(k);
  ptr.push_back(sorted.nnz());
  return ptr;
}

std::vector<std::int64_t> fiber_ptr(const SparseTensor& t, const std::vector<std::int64_t>& perm,
                                    int mode) {
  check_mode(t, mode);
  const std::int64_t n = t.nnz();
  const int threads = threads_for(n * t.order());
  // Fiber starts found per range of positions, then joined in order.
  std::vector<std::vector<std::int64_t>> starts(threads);
  parallel_for(threads, threads, [&](int p) {
    for (std::int64_t k = n * p / threads; k < n * (p + 1) / threads; ++k)
      if (k == 0 || !same_except(t, perm[k], perm[k - 1], mode)) starts[p].push_back(k);
  });
  std::vector<std::int64_t> ptr;
  std::size_t total = 1;
  for (const auto& s : starts) total += s.size();
  ptr.reserve(total);
  for (auto& s : starts) {
    ptr.insert(ptr.end(), s.begin(), s.end());
    std::vector<std::int64_t>().swap(s);
  }
  ptr.push_back(n);
  return ptr;
}

bool has_repeats(const SparseTensor& t, const std::vector<std::int64_t>& perm) {
  const std::int64_t n = t.nnz();
  const int threads = threads_for(n * t.order());
  std::atomic<bool> found{false};
  parallel_for(threads, threads, [&](int p) {
    for (std::int64_t k = std::max<std::int64_t>(1, n * p / threads);
         k < n * (p + 1) / threads && !found.load(std::memory_order_relaxed); ++k)
      if (same_except(t, perm[k], perm[k - 1], -1)) found = true;
  });
  return found;
}

Slices slices(const SparseTensor& sorted, int mode) {
  check_mode(sorted, mode);
  Slices s;
  const auto& key = sorted.idx[mode];
  for (std::int64_t k = 0; k < sorted.nnz(); ++k)
    if (k == 0 || key[k] != key[k - 1]) {
      s.index.push_back(key[k]);
      s.ptr.push_back(k);
    }
  s.ptr.push_back(sorted.nnz());
  return s;
}

std::int64_t sort_and_merge(SparseTensor& t) {
  std::vector<int> natural(t.dims.size());
  std::iota(natural.begin(), natural.end(), 0);
  sort_by_modes(t, natural);
  return merge_duplicates(t);
}

}  // namespace sparsetune
