#pragma once
// Random dense operands (x, B, v) for checking and timing kernels: uniform in [-1, 1),
// reproducible from (seed, stream) whatever the number of threads that fills them.
#include <cstdint>
#include <vector>

namespace sparsetune {

// `count` values uniform in [-1, 1), never all zero. Blocks of 2^16 values each come from their
// own generator seeded by (seed, stream, block), so the values do not depend on `threads` (0:
// every core; small vectors are filled on one): a tune's B of a million rows and 128 columns is
// 2 x 10^8 values, seconds on one core.
std::vector<double> random_uniform(std::int64_t count, std::uint64_t seed, std::uint64_t stream,
                                   int threads = 0);

}  // namespace sparsetune
