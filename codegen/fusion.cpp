#include "codegen/fusion.hpp"

#include <algorithm>
#include <limits>

namespace sparsetune::codegen {

namespace {

// Static shared memory of a part's kernel: its block-level reductions' accumulators (C tiles).
std::int64_t shared_bytes(const graph::Format& f, const graph::PartFormat& p) {
  const std::int64_t acc = f.dtype == "f64" ? 8 : 4;
  std::int64_t slots = 0;
  for (const auto& r : p.reductions) {
    if (r == "SHMEM_OFFSET_RED") slots += std::max<std::int64_t>(1, p.shmem_rows);
    if (r == "SHMEM_TOTAL_RED") slots += p.threads / 32;
  }
  return slots * p.col_tile * acc;
}

}  // namespace

Fusion plan_fusion(const graph::Format& f) {
  Fusion u;
  u.atomic.assign(f.parts.size(), false);
  for (std::size_t i = 0; i < f.parts.size(); ++i) u.atomic[i] = f.parts[i].atomic;
  std::vector<std::size_t> work;
  for (std::size_t i = 0; i < f.parts.size(); ++i)
    if (f.parts[i].n_bmtb > 0) {
      // A part's columns per block: its tile, times its lanes over columns (COL_TILE lanes).
      u.narrowest_tile = work.empty()
                             ? f.parts[i].col_span()
                             : std::min<std::int64_t>(u.narrowest_tile, f.parts[i].col_span());
      work.push_back(i);
    }
  if ((f.op != "spmm" && f.op != "spmv") || work.size() < 2) return u;
  if (f.op == "spmv" && !f.store_only) {
    u.why = "its parts add into y one after another (only a store-only SpMV format is fused)";
    return u;
  }
  std::int64_t shared = 0;
  for (auto i : work) {
    const auto& p = f.parts[i];
    if (p.threads != f.parts[work[0]].threads) {
      u.why = "parts " + std::to_string(work[0]) + " and " + std::to_string(i) + " run " +
              std::to_string(f.parts[work[0]].threads) + " and " + std::to_string(p.threads) +
              " threads a block";
      return u;
    }
    shared += shared_bytes(f, p);
    u.grid += p.grid;
  }
  if (shared > 48 * 1024) {
    u.why = "the parts' shared memory together is " + std::to_string(shared) +
            " bytes, more than 48 KiB";
    return u;
  }
  if (u.grid > std::numeric_limits<std::int32_t>::max()) {
    u.why = "the parts' grids together exceed 2^31 - 1 blocks";
    return u;
  }
  // Rows of C that more than one part may write (every row of a part's origin_row): those
  // parts add atomically once they run at once.
  std::vector<int> owners(static_cast<std::size_t>(f.rows), 0);
  const auto rows_of = [&](std::size_t i) -> const std::vector<std::int64_t>& {
    return f.parts[i].array(graph::Arr::origin_row).ints;
  };
  for (auto i : work)
    for (auto r : rows_of(i))
      if (r >= 0 && r < f.rows) ++owners[r];
  for (auto i : work)
    for (auto r : rows_of(i))
      if (r >= 0 && r < f.rows && owners[r] > 1) {
        u.atomic[i] = true;
        break;
      }
  // A store-only SpMV format writes each row once over all parts: parts sharing a row would
  // need atomics into a y nobody zeroed.
  if (f.op == "spmv")
    for (auto i : work)
      if (u.atomic[i]) {
        u.why = "part " + std::to_string(i) + " shares rows of y with another part";
        return u;
      }
  u.fused = true;
  return u;
}

}  // namespace sparsetune::codegen
