#include "core/random_fill.hpp"

#include <algorithm>
#include <functional>
#include <random>
#include <thread>

namespace sparsetune {

namespace {

constexpr std::int64_t kBlock = std::int64_t{1} << 16;

// SplitMix64's finaliser: distinct (seed, stream, block) give unrelated generator seeds.
std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void fill_blocks(std::vector<double>& v, std::uint64_t seed, std::uint64_t stream, std::int64_t b0,
                 std::int64_t b1) {
  const auto count = static_cast<std::int64_t>(v.size());
  for (std::int64_t b = b0; b < b1; ++b) {
    std::mt19937_64 rng(mix(mix(seed) ^ mix(stream + 1) ^ static_cast<std::uint64_t>(b)));
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const std::int64_t end = std::min(count, (b + 1) * kBlock);
    for (std::int64_t i = b * kBlock; i < end; ++i) v[static_cast<std::size_t>(i)] = u(rng);
  }
}

}  // namespace

std::vector<double> random_uniform(std::int64_t count, std::uint64_t seed, std::uint64_t stream,
                                   int threads) {
  std::vector<double> v(static_cast<std::size_t>(std::max<std::int64_t>(count, 0)));
  const std::int64_t blocks = (count + kBlock - 1) / kBlock;
  std::int64_t t = threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
  t = std::clamp<std::int64_t>(std::min(t, blocks / 4), 1, 64);  // 4+ blocks a thread
  if (t <= 1) {
    fill_blocks(v, seed, stream, 0, blocks);
  } else {
    std::vector<std::thread> pool;
    for (std::int64_t k = 0; k < t; ++k)
      pool.emplace_back(fill_blocks, std::ref(v), seed, stream, blocks * k / t,
                        blocks * (k + 1) / t);
    for (auto& th : pool) th.join();
  }
  if (count > 0 && std::all_of(v.begin(), v.end(), [](double x) { return x == 0.0; })) v[0] = 0.5;
  return v;
}

}  // namespace sparsetune
