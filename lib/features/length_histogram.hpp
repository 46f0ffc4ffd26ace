#pragma once
// The distribution of row (or column) lengths, kept as (length, how many) pairs sorted by length.
// Every per-row statistic the feature tables ask for — mean, deviation, extremes, k-th largest,
// how many of the longest rows cover a share of the non-zeros — is read from it in time linear in
// the number of distinct lengths (at most about sqrt(2·nnz)), with no sort of the rows.
#include <cstdint>
#include <utility>
#include <vector>

namespace sparsetune::features {

class LengthHistogram {
 public:
  LengthHistogram() = default;

  // One entry per item (row or column). `extra_zeros` adds that many items of length 0 without
  // listing them (the empty columns of a matrix too wide for a dense column count).
  explicit LengthHistogram(const std::vector<std::int64_t>& lengths, std::int64_t extra_zeros = 0);

  std::int64_t items() const { return items_; }  // n: rows or columns
  std::int64_t total() const { return total_; }  // nnz: sum of all lengths
  std::int64_t min() const;                      // 0 when there are no items
  std::int64_t max() const;
  std::int64_t zeros() const;  // items of length 0
  double mean() const;         // total / items; 0 when there are no items
  double variance() const;     // population variance, divided by items
  double stddev() const;

  // Length of the k-th longest item (k >= 1); 0 when k > items.
  std::int64_t kth_largest(std::int64_t k) const;

  // Fewest items whose lengths sum to at least num/den of the total, taking the longest first
  // (ties do not matter: equal lengths are interchangeable). 0 when the total is 0.
  std::int64_t items_to_cover(std::int64_t num, std::int64_t den) const;

  const std::vector<std::pair<std::int64_t, std::int64_t>>& bins() const { return bins_; }

 private:
  std::vector<std::pair<std::int64_t, std::int64_t>>
      bins_;  // (length, count), ascending, count > 0
  std::int64_t items_ = 0;
  std::int64_t total_ = 0;
};

}  // namespace sparsetune::features
