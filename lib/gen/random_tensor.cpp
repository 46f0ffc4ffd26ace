#include "gen/random_tensor.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>

#include "core/error.hpp"
#include "core/parallel_for.hpp"
#include "gen/assemble.hpp"
#include "gen/rng.hpp"

namespace sparsetune::gen {

namespace {
constexpr std::int64_t kMaxDim = (std::int64_t{1} << 31) - 1;
}

SparseTensor random_tensor(const RandomTensorParams& p, std::uint64_t seed) {
  const int order = static_cast<int>(p.dims.size());
  if (order < 1 || order > 16)
    throw Error("tensor: dims must list 1 to 16 sizes, got " + std::to_string(order));
  double cells = 1.0;
  for (auto d : p.dims) {
    if (d < 1 || d > kMaxDim)
      throw Error("tensor: dims entries must be in [1, 2^31 - 1], got " + std::to_string(d));
    cells *= static_cast<double>(d);
  }
  if (p.nnz < 0 || static_cast<double>(p.nnz) > cells) {
    char product[32];
    std::snprintf(product, sizeof product, "%.17g", cells);
    throw Error("tensor: nnz " + std::to_string(p.nnz) + " does not fit: it must be in [0, " +
                product + "], the product of the dims");
  }
  if (!(p.skew >= 0.0 && p.skew <= 100.0))
    throw Error("tensor: skew must be in [0, 100], got " + std::to_string(p.skew));
  // Peak per entry: coordinates twice (drawn, output), hash table, sort permutations, value.
  check_entry_budget(static_cast<double>(p.nnz), "tensor", 0, 16.0 * order + 56);

  Rng rng(seed);
  std::vector<double> weights;
  if (p.skew > 0.0) {
    weights.resize(p.dims[0]);
    for (std::int64_t i = 0; i < p.dims[0]; ++i)
      weights[i] = det_pow(static_cast<double>(i + 1), -p.skew);
  }
  const DiscreteSampler slice(p.skew > 0.0 ? weights : std::vector<double>{1.0});

  // Accepted coordinates live in `coord` (entry e at [e * order, (e + 1) * order)), the next
  // candidate in the slot after them. An open-addressing table of entry numbers finds repeats.
  std::vector<std::int64_t> coord((p.nnz + 1) * order);
  const auto at = [&](std::int64_t e) { return coord.begin() + e * order; };
  const auto hash = [&](std::int64_t e) {
    std::uint64_t h = 0x243f6a8885a308d3ULL;
    for (int m = 0; m < order; ++m) {
      std::uint64_t s = h ^ static_cast<std::uint64_t>(at(e)[m]);
      h = splitmix64(s);
    }
    return h;
  };
  std::uint64_t capacity = 16;
  while (capacity < 2 * static_cast<std::uint64_t>(p.nnz)) capacity *= 2;
  std::vector<std::int64_t> table(capacity, -1);
  const std::uint64_t mask = capacity - 1;
  const std::int64_t max_draws = 32 * p.nnz + 4096;
  std::int64_t accepted = 0;
  for (std::int64_t draw = 0; accepted < p.nnz; ++draw) {
    if (draw >= max_draws)
      throw Error("tensor: could not place " + std::to_string(p.nnz) +
                  " distinct coordinates (the first slices fill up); lower nnz or skew");
    const auto cand = at(accepted);
    cand[0] = p.skew > 0.0 ? slice(rng) : static_cast<std::int64_t>(rng.below(p.dims[0]));
    for (int m = 1; m < order; ++m) cand[m] = static_cast<std::int64_t>(rng.below(p.dims[m]));
    std::uint64_t h = hash(accepted) & mask;
    const auto same = [&](std::int64_t e) {
      for (int m = 0; m < order; ++m)
        if (at(e)[m] != cand[m]) return false;
      return true;
    };
    while (table[h] >= 0 && !same(table[h])) h = (h + 1) & mask;
    if (table[h] < 0) table[h] = accepted++;
  }
  table = {};

  // Lexicographic order: the coordinates are distinct, so core's radix sort (every core, linear
  // in the entries) gives the one order there is.
  SparseTensor t;
  t.dims = p.dims;
  t.idx.assign(order, std::vector<std::int64_t>(p.nnz));
  parallel_ranges(p.nnz, threads_for(p.nnz), [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t e = lo; e < hi; ++e)
      for (int m = 0; m < order; ++m) t.idx[m][e] = at(e)[m];
  });
  coord = {};
  t.val.assign(p.nnz, 0.0);
  std::vector<int> natural(order);
  std::iota(natural.begin(), natural.end(), 0);
  sort_by_modes(t, natural);
  // Values are drawn in sorted order, after the coordinates, so they do not depend on the
  // order in which coordinates were accepted.
  for (auto& v : t.val) v = rng.uniform_pos();
  return t;
}

}  // namespace sparsetune::gen
