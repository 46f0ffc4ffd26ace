#include "core/tensor.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "core/error.hpp"

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

void sort_by_modes(SparseTensor& t, const std::vector<int>& mode_order) {
  const std::int64_t n = t.nnz();
  std::vector<std::int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  // Stable LSD passes, least significant mode first: each pass keeps earlier orderings.
  for (auto it = mode_order.rbegin(); it != mode_order.rend(); ++it) {
    const auto& key = t.idx[*it];
    std::stable_sort(perm.begin(), perm.end(),
                     [&](std::int64_t a, std::int64_t b) { return key[a] < key[b]; });
  }
  for (auto& column : t.idx) {
    std::vector<std::int64_t> c(n);
    for (std::int64_t k = 0; k < n; ++k) c[k] = column[perm[k]];
    column.swap(c);
  }
  std::vector<double> v(n);
  for (std::int64_t k = 0; k < n; ++k) v[k] = t.val[perm[k]];
  t.val.swap(v);
}

std::int64_t merge_duplicates(SparseTensor& t) {
  std::int64_t out = 0;
  for (std::int64_t k = 0; k < t.nnz(); ++k) {
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

}  // namespace sparsetune
