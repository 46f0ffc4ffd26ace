#include "gen/kronecker.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "gen/assemble.hpp"
#include "gen/rng.hpp"

namespace sparsetune::gen {

void validate(const KroneckerParams& p) {
  if (p.scale < 1 || p.scale > 30)
    throw Error("kron: scale must be in [1, 30], got " + std::to_string(p.scale));
  if (p.edge_factor < 1)
    throw Error("kron: edge_factor must be at least 1, got " + std::to_string(p.edge_factor));
  const auto check = [](double v, const char* name) {
    if (!(v >= 0.0 && v <= 1.0))
      throw Error(std::string("kron: ") + name + " must be in [0, 1], got " + std::to_string(v));
  };
  check(p.a, "a");
  check(p.b, "b");
  check(p.c, "c");
  // A little slack so that 0.25 + 0.25 + 0.25 + 0.25-style inputs are not refused for rounding.
  if (p.a + p.b + p.c > 1.0 + 1e-12)
    throw Error("kron: a + b + c must be at most 1, got " + std::to_string(p.a + p.b + p.c));
  // Peak: the edge list (24 B), its row-sorted copy (16 B) and the CSR (16 B) per edge.
  const double edges = static_cast<double>(p.edge_factor) * std::ldexp(1.0, p.scale);
  check_entry_budget(edges, "kron", std::ldexp(1.0, p.scale), p.symmetric ? 88 : 56);
}

Coo64 kronecker_edges(const KroneckerParams& p, std::uint64_t seed) {
  validate(p);
  const std::int64_t n = std::int64_t{1} << p.scale;
  const std::int64_t m = p.edge_factor * n;
  // Quadrants are chosen from 32 random bits per level (two levels per draw), compared with the
  // cumulative probabilities scaled to 2^32: exact integer comparisons, identical everywhere.
  const auto scaled = [](double x) {
    return std::min<std::uint64_t>(std::uint64_t{1} << 32,
                                   static_cast<std::uint64_t>(std::ldexp(x, 32)));
  };
  const std::uint64_t ta = scaled(p.a), tab = scaled(p.a + p.b), tabc = scaled(p.a + p.b + p.c);
  Rng rng(seed);
  Coo64 e;
  e.rows = e.cols = n;
  e.row.resize(m);
  e.col.resize(m);
  e.val.resize(m);
  for (std::int64_t k = 0; k < m; ++k) {
    std::int64_t u = 0, v = 0;
    std::uint64_t bits = 0;
    for (int level = 0; level < p.scale; ++level) {
      std::uint64_t r;
      if (level % 2 == 0) {
        bits = rng.next();
        r = bits >> 32;
      } else {
        r = bits & 0xffffffffULL;
      }
      // Quadrant from three comparisons, without branches (the choice is unpredictable):
      // row bit = r >= a+b; column bit set in quadrants B and D only.
      const int shift = p.scale - 1 - level;
      const std::uint64_t ge_a = r >= ta, ge_ab = r >= tab, ge_abc = r >= tabc;
      u |= static_cast<std::int64_t>(ge_ab) << shift;
      v |= static_cast<std::int64_t>(ge_a ^ ge_ab ^ ge_abc) << shift;
    }
    e.row[k] = u;
    e.col[k] = v;
    e.val[k] = rng.uniform_pos();
  }
  if (p.permute) {
    const auto perm = random_permutation(n, rng);
    for (std::int64_t k = 0; k < m; ++k) {
      e.row[k] = perm[e.row[k]];
      e.col[k] = perm[e.col[k]];
    }
  }
  return e;
}

Csr64 kronecker(const KroneckerParams& p, std::uint64_t seed) {
  Coo64 e = kronecker_edges(p, seed);
  const std::int64_t m = e.nnz();
  std::int64_t out = 0;
  for (std::int64_t k = 0; k < m; ++k) {
    std::int64_t u = e.row[k], v = e.col[k];
    if (!p.self_loops && u == v) continue;
    if (p.symmetric && u > v) std::swap(u, v);
    e.row[out] = u;
    e.col[out] = v;
    e.val[out] = e.val[k];
    ++out;
  }
  e.row.resize(out);
  e.col.resize(out);
  e.val.resize(out);
  Csr64 a = assemble_keep_first(e.rows, e.cols, e.row, e.col, e.val);
  return p.symmetric ? mirror_upper(a) : a;
}

}  // namespace sparsetune::gen
