#include "core/radix_sort.hpp"

#include <bit>

#include "core/error.hpp"
#include "core/parallel_for.hpp"

namespace sparsetune {

void stable_sort_by_key(std::vector<std::uint64_t>& keys, std::vector<std::int64_t>& items,
                        std::uint64_t max_key, int threads) {
  const auto n = static_cast<std::int64_t>(keys.size());
  if (static_cast<std::int64_t>(items.size()) != n)
    throw Error("radix sort: keys and items differ in length");
  const int bits = 64 - std::countl_zero(max_key);
  if (n < 2 || bits == 0) return;
  // Digits of at most 11 bits: a thread's counts (2^11 of them) stay in L1.
  const int passes = (bits + 10) / 11;
  const int digit = (bits + passes - 1) / passes;
  const std::int64_t buckets = std::int64_t{1} << digit;
  const std::uint64_t mask = static_cast<std::uint64_t>(buckets - 1);
  const int parts = threads > 0 ? threads : threads_for(n);
  std::vector<std::uint64_t> keys2(n);
  std::vector<std::int64_t> items2(n);
  std::vector<std::int64_t> at(static_cast<std::size_t>(parts) * buckets);
  const auto range = [&](int p) { return std::pair{n * p / parts, n * (p + 1) / parts}; };
  for (int pass = 0; pass < passes; ++pass) {
    const int shift = pass * digit;
    parallel_for(parts, parts, [&](int p) {
      std::int64_t* count = &at[static_cast<std::size_t>(p) * buckets];
      std::fill(count, count + buckets, 0);
      const auto [lo, hi] = range(p);
      for (std::int64_t k = lo; k < hi; ++k) ++count[(keys[k] >> shift) & mask];
    });
    // Each part's first slot per digit: digits ascending, parts in order within a digit.
    std::int64_t next = 0;
    bool one_digit = false;
    for (std::int64_t d = 0; d < buckets; ++d) {
      const std::int64_t start = next;
      for (int p = 0; p < parts; ++p) {
        std::int64_t& c = at[static_cast<std::size_t>(p) * buckets + d];
        const std::int64_t here = c;
        c = next;
        next += here;
      }
      if (next - start == n) one_digit = true;
    }
    if (one_digit) continue;  // every key has this digit: the pass would move nothing
    parallel_for(parts, parts, [&](int p) {
      std::int64_t* slot = &at[static_cast<std::size_t>(p) * buckets];
      const auto [lo, hi] = range(p);
      for (std::int64_t k = lo; k < hi; ++k) {
        const std::int64_t to = slot[(keys[k] >> shift) & mask]++;
        keys2[to] = keys[k];
        items2[to] = items[k];
      }
    });
    keys.swap(keys2);
    items.swap(items2);
  }
}

}  // namespace sparsetune
