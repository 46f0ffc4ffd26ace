#pragma once
// Row and column permutations of CSR matrices (the converting-stage reorderings build on these).
#include <cstdint>
#include <string>
#include <vector>

#include "core/convert.hpp"
#include "core/error.hpp"
#include "core/matrix.hpp"

namespace sparsetune {

// Throws unless `p` holds each of 0..n-1 exactly once.
inline void check_permutation(const std::vector<std::int64_t>& p, std::int64_t n) {
  if (static_cast<std::int64_t>(p.size()) != n)
    throw Error("permutation has " + std::to_string(p.size()) + " entries, expected " +
                std::to_string(n));
  std::vector<char> seen(n, 0);
  for (auto v : p) {
    if (v < 0 || v >= n || seen[v]) throw Error("not a permutation: entry " + std::to_string(v));
    seen[v] = 1;
  }
}

inline std::vector<std::int64_t> inverse_permutation(const std::vector<std::int64_t>& p) {
  std::vector<std::int64_t> q(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) q[p[i]] = static_cast<std::int64_t>(i);
  return q;
}

// B = P·A: row i of the result is row perm[i] of `a`.
template <class I, class P>
Csr<I, P> permute_rows(const Csr<I, P>& a, const std::vector<std::int64_t>& perm) {
  check_permutation(perm, a.rows);
  Csr<I, P> b;
  b.rows = a.rows;
  b.cols = a.cols;
  b.row_ptr.assign(a.rows + 1, P{0});
  for (std::int64_t i = 0; i < a.rows; ++i) b.row_ptr[i + 1] = b.row_ptr[i] + (a.row_ptr[perm[i] + 1] - a.row_ptr[perm[i]]);
  b.col_idx.resize(a.nnz());
  b.val.resize(a.nnz());
  for (std::int64_t i = 0; i < a.rows; ++i) {
    auto src = static_cast<std::int64_t>(a.row_ptr[perm[i]]);
    auto dst = static_cast<std::int64_t>(b.row_ptr[i]);
    auto len = static_cast<std::int64_t>(b.row_ptr[i + 1]) - dst;
    std::copy_n(a.col_idx.begin() + src, len, b.col_idx.begin() + dst);
    std::copy_n(a.val.begin() + src, len, b.val.begin() + dst);
  }
  return b;
}

// B = A·Q: column j of the result is column perm[j] of `a`. Rows stay sorted by column.
template <class I, class P>
Csr<I, P> permute_cols(const Csr<I, P>& a, const std::vector<std::int64_t>& perm) {
  check_permutation(perm, a.cols);
  auto inv = inverse_permutation(perm);
  Csr<I, P> b = a;
  for (auto& c : b.col_idx) c = static_cast<I>(inv[static_cast<std::int64_t>(c)]);
  detail::sort_rows(b);
  return b;
}

}  // namespace sparsetune
