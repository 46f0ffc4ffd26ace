#pragma once
// A stable LSD radix sort of (key, item) pairs with bounded keys: linear in the entries, where a
// comparison sort of 10^8 tensor entries by their coordinates takes minutes. Parallel per pass
// (each thread counts and then places its own range), and, being stable, it gives exactly the
// order a serial stable sort gives, whatever the thread count.
#include <cstdint>
#include <vector>

namespace sparsetune {

// Sorts keys ascending, carrying items along, stably; every key must be <= max_key. threads 0:
// by the size (core/parallel_for.hpp's threads_for).
void stable_sort_by_key(std::vector<std::uint64_t>& keys, std::vector<std::int64_t>& items,
                        std::uint64_t max_key, int threads = 0);

}  // namespace sparsetune
