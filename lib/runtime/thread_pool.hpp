#pragma once
// Runs fn(0..count-1) on a pool of host threads; the first exception thrown is rethrown.
#include <cstdint>
#include <functional>

namespace sparsetune::runtime {

// threads = 0 uses every host core.
void parallel_for(std::int64_t count, const std::function<void(std::int64_t)>& fn,
                  unsigned threads = 0);

}  // namespace sparsetune::runtime
