// Random operands: the same values whatever the thread count, in range, distinct per stream.
#include "core/random_fill.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

using namespace sparsetune;

TEST_CASE("random operands do not depend on the threads that fill them", "[core]") {
  // 2^20 + 5 values: 17 blocks, the last one partial.
  const std::int64_t count = (std::int64_t{1} << 20) + 5;
  const auto one = random_uniform(count, 7, 128, 1);
  REQUIRE(static_cast<std::int64_t>(one.size()) == count);
  CHECK(random_uniform(count, 7, 128, 3) == one);
  CHECK(random_uniform(count, 7, 128, 0) == one);
  double lo = 1, hi = -1, sum = 0;
  for (double x : one) lo = std::min(lo, x), hi = std::max(hi, x), sum += x;
  CHECK(lo >= -1.0);
  CHECK(hi < 1.0);
  CHECK(lo < -0.99);
  CHECK(hi > 0.99);
  CHECK(std::abs(sum / static_cast<double>(count)) < 0.01);  // mean 0: 3 sigma is 0.0017
  // Another stream (n), another seed, another vector; a prefix is the same values.
  CHECK(random_uniform(count, 7, 32, 1) != one);
  CHECK(random_uniform(count, 8, 128, 1) != one);
  const auto head = random_uniform(1000, 7, 128);
  CHECK(std::equal(head.begin(), head.end(), one.begin()));
  CHECK(random_uniform(0, 7, 128).empty());
}
