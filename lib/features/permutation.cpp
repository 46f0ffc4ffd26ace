// The 24 features of Table II of the row-permutation predictor (ISPASS'21). The kernel they model
// is output-stationary SpMM: row i of A goes to warp i mod N_w of the CTA, the warp's N_t threads
// share the row's non-zeros, and each non-zero in column c reads the 128-byte line c / 32 of a
// column of B. A row's bit mask has one bit per line it touches.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "features/matrix_features.hpp"

namespace sparsetune::features {

namespace {
struct MinMeanMax {
  std::int64_t min = std::numeric_limits<std::int64_t>::max();
  std::int64_t max = 0;
  double sum = 0.0;
  std::int64_t count = 0;
  void add(std::int64_t v) {
    min = std::min(min, v);
    max = std::max(max, v);
    sum += static_cast<double>(v);
    ++count;
  }
  void push(std::vector<Feature>& f, const std::string& name, const std::string& g) const {
    f.push_back({name + "_min", g, count == 0 ? 0.0 : static_cast<double>(min)});
    f.push_back({name + "_mean", g, count == 0 ? 0.0 : sum / static_cast<double>(count)});
    f.push_back({name + "_max", g, static_cast<double>(max)});
  }
};

// Maps a column to its line slot: the line itself, or, when the matrix is so wide that one slot
// per line would dwarf the matrix, the rank of the line among the lines in use.
class LineSlots {
 public:
  explicit LineSlots(const Csr64& a)
      : lines_(a.cols / kLineColumns + (a.cols % kLineColumns != 0 ? 1 : 0)) {  // no overflow
    if (lines_ > 2 * a.nnz() + 4096) {
      used_.reserve(a.col_idx.size());
      for (auto c : a.col_idx) used_.push_back(c / kLineColumns);
      std::sort(used_.begin(), used_.end());
      used_.erase(std::unique(used_.begin(), used_.end()), used_.end());
      compressed_ = true;
    }
  }
  std::int64_t lines() const { return lines_; }
  std::int64_t slots() const {
    return compressed_ ? static_cast<std::int64_t>(used_.size()) : lines_;
  }
  std::int64_t slot(std::int64_t col) const {
    const std::int64_t line = col / kLineColumns;
    if (!compressed_) return line;
    return std::lower_bound(used_.begin(), used_.end(), line) - used_.begin();
  }

 private:
  std::int64_t lines_;
  bool compressed_ = false;
  std::vector<std::int64_t> used_;
};
}  // namespace

std::vector<Feature> permutation_features(const Csr64& a) {
  check_csr(a);
  static_assert(kWarpsPerCta <= 32, "warp sets are kept as 32-bit masks");
  const std::string g(kPermutation);
  const LineSlots slots(a);
  const std::int64_t warps = std::min(a.rows, kWarpsPerCta);

  std::vector<std::int64_t> last_row(slots.slots(), -1);  // last row that touched the line
  std::vector<std::int64_t> requests(slots.slots(), 0);   // rows that touched the line
  std::vector<std::uint32_t> warp_set(slots.slots(), 0);  // warps that touched the line
  std::vector<std::int64_t> warp_load(warps, 0), warp_total_lines(warps, 0);
  MinMeanMax row_nnz, row_blocks, adjacent;

  std::int64_t prev_lines = 0;
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const std::int64_t begin = a.row_ptr[r], end = a.row_ptr[r + 1];
    const std::int64_t w = r % kWarpsPerCta;
    std::int64_t lines = 0, shared = 0;
    // Stamping with the row index counts distinct lines without needing sorted columns, and a
    // stamp of r - 1 marks a line the previous row touched: the masks' intersection.
    for (std::int64_t k = begin; k < end; ++k) {
      const std::int64_t s = slots.slot(a.col_idx[k]);
      if (last_row[s] == r) continue;
      ++lines;
      if (last_row[s] == r - 1) ++shared;
      last_row[s] = r;
      ++requests[s];
      warp_set[s] |= std::uint32_t{1} << w;
    }
    row_nnz.add(end - begin);
    row_blocks.add(lines);
    warp_load[w] += (end - begin + kThreadsPerWarp - 1) / kThreadsPerWarp;
    warp_total_lines[w] += lines;
    if (r > 0) adjacent.add(prev_lines + lines - 2 * shared);  // Hamming distance of the masks
    prev_lines = lines;
  }

  std::vector<std::int64_t> warp_distinct_lines(warps, 0);
  MinMeanMax same_lines;
  for (std::int64_t s = 0; s < slots.slots(); ++s) {
    same_lines.add(requests[s]);
    for (std::uint32_t m = warp_set[s]; m != 0; m &= m - 1)
      ++warp_distinct_lines[std::countr_zero(m)];
  }
  // Lines no row touches are lines of B too, with 0 requests; compressed slots leave them out.
  const std::int64_t untouched = slots.lines() - slots.slots();
  if (untouched > 0) {
    same_lines.min = 0;
    same_lines.count += untouched;
  }

  MinMeanMax load, distinct, total;
  for (std::int64_t w = 0; w < warps; ++w) {
    load.add(warp_load[w]);
    distinct.add(warp_distinct_lines[w]);
    total.add(warp_total_lines[w]);
  }

  std::vector<Feature> f = {
      {"rows", g, static_cast<double>(a.rows)},
      {"cols", g, static_cast<double>(a.cols)},
      {"density", g,
       a.rows == 0 || a.cols == 0 ? 0.0
                                  : static_cast<double>(a.nnz()) / (static_cast<double>(a.rows) *
                                                                    static_cast<double>(a.cols))},
  };
  row_nnz.push(f, "nnz_per_row", g);
  row_blocks.push(f, "nnz_blocks_per_row", g);
  load.push(f, "warp_load", g);
  same_lines.push(f, "same_cache_lines", g);
  distinct.push(f, "distinct_cache_lines_per_warp", g);
  total.push(f, "total_cache_lines_per_warp", g);
  adjacent.push(f, "adjacent_vector_distance", g);
  return f;
}

}  // namespace sparsetune::features
