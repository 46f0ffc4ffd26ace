#include "features/length_histogram.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace sparsetune::features {

LengthHistogram::LengthHistogram(const std::vector<std::int64_t>& lengths,
                                 std::int64_t extra_zeros) {
  std::int64_t max_len = 0;
  for (auto l : lengths) {
    if (l < 0) throw Error("negative length in a length histogram");
    max_len = std::max(max_len, l);
    total_ += l;
  }
  if (extra_zeros < 0) throw Error("negative count of empty items");
  items_ = static_cast<std::int64_t>(lengths.size()) + extra_zeros;
  const auto n = static_cast<std::int64_t>(lengths.size());
  // Counting by length is linear when the longest item is not far beyond the item count; a single
  // huge row would make that array large, so then sort a copy instead (n log n, n is small).
  if (max_len <= 4 * n + 4096) {
    std::vector<std::int64_t> count(max_len + 1, 0);
    for (auto l : lengths) ++count[l];
    count[0] += extra_zeros;
    for (std::int64_t l = 0; l <= max_len; ++l)
      if (count[l] > 0) bins_.emplace_back(l, count[l]);
  } else {
    std::vector<std::int64_t> sorted = lengths;
    std::sort(sorted.begin(), sorted.end());
    if (extra_zeros > 0) bins_.emplace_back(0, extra_zeros);
    for (auto l : sorted) {
      if (!bins_.empty() && bins_.back().first == l)
        ++bins_.back().second;
      else
        bins_.emplace_back(l, 1);
    }
  }
  if (bins_.empty() && extra_zeros > 0) bins_.emplace_back(0, extra_zeros);
}

std::int64_t LengthHistogram::min() const { return bins_.empty() ? 0 : bins_.front().first; }
std::int64_t LengthHistogram::max() const { return bins_.empty() ? 0 : bins_.back().first; }
std::int64_t LengthHistogram::zeros() const {
  return !bins_.empty() && bins_.front().first == 0 ? bins_.front().second : 0;
}

double LengthHistogram::mean() const {
  return items_ == 0 ? 0.0 : static_cast<double>(total_) / static_cast<double>(items_);
}

double LengthHistogram::variance() const {
  if (items_ == 0) return 0.0;
  const double mu = mean();
  double s = 0.0;
  for (const auto& [len, count] : bins_) {
    const double d = static_cast<double>(len) - mu;
    s += static_cast<double>(count) * d * d;
  }
  return s / static_cast<double>(items_);
}

double LengthHistogram::stddev() const { return std::sqrt(variance()); }

std::int64_t LengthHistogram::kth_largest(std::int64_t k) const {
  if (k < 1) throw Error("k-th largest needs k >= 1");
  std::int64_t seen = 0;
  for (auto it = bins_.rbegin(); it != bins_.rend(); ++it) {
    seen += it->second;
    if (seen >= k) return it->first;
  }
  return 0;
}

std::int64_t LengthHistogram::items_to_cover(std::int64_t num, std::int64_t den) const {
  if (num < 0 || den <= 0) throw Error("coverage share must be a non-negative fraction");
  if (total_ == 0 || num == 0) return 0;
  // Integer test: den·covered >= num·total, so shares like 0.3 suffer no rounding.
  const std::int64_t target = num * total_;
  std::int64_t covered = 0, taken = 0;
  for (auto it = bins_.rbegin(); it != bins_.rend(); ++it) {
    const auto [len, count] = *it;
    if (len == 0) break;
    if (den * (covered + count * len) >= target) {
      const std::int64_t need = target - den * covered;  // > 0 here
      return taken + (need + den * len - 1) / (den * len);
    }
    covered += count * len;
    taken += count;
  }
  return taken;  // num > den: every non-empty item
}

}  // namespace sparsetune::features
