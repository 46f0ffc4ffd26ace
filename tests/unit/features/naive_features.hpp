#pragma once
// Direct transcriptions of the feature definitions — sets, full sorts, no shortcuts — that the
// fast implementations are checked against.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/matrix.hpp"

namespace sparsetune::test {

// ISPASS'21 Table II, with N_w = N_t = 32 and 32-column lines.
inline std::map<std::string, double> naive_permutation_features(const Csr64& a) {
  const std::int64_t nw = 32, nt = 32, line = 32;
  std::vector<std::set<std::int64_t>> mask(a.rows);
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (auto k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) mask[r].insert(a.col_idx[k] / line);
  const std::int64_t warps = std::min(a.rows, nw);
  std::vector<double> load(warps, 0), total(warps, 0), distinct(warps, 0);
  std::vector<std::set<std::int64_t>> warp_lines(warps);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    load[r % nw] += static_cast<double>((a.row_length(r) + nt - 1) / nt);
    total[r % nw] += static_cast<double>(mask[r].size());
    warp_lines[r % nw].insert(mask[r].begin(), mask[r].end());
  }
  for (std::int64_t w = 0; w < warps; ++w) distinct[w] = static_cast<double>(warp_lines[w].size());
  std::vector<double> same((a.cols + line - 1) / line, 0), nnz(a.rows), blocks(a.rows), adjacent;
  for (std::int64_t r = 0; r < a.rows; ++r) {
    for (auto l : mask[r]) same[l] += 1;
    nnz[r] = static_cast<double>(a.row_length(r));
    blocks[r] = static_cast<double>(mask[r].size());
    if (r > 0) {
      std::vector<std::int64_t> diff;
      std::set_symmetric_difference(mask[r - 1].begin(), mask[r - 1].end(), mask[r].begin(),
                                    mask[r].end(), std::back_inserter(diff));
      adjacent.push_back(static_cast<double>(diff.size()));
    }
  }
  std::map<std::string, double> f;
  f["rows"] = static_cast<double>(a.rows);
  f["cols"] = static_cast<double>(a.cols);
  f["density"] = static_cast<double>(a.nnz()) / static_cast<double>(a.rows * a.cols);
  auto stats = [&](const std::string& name, const std::vector<double>& v) {
    f[name + "_min"] = v.empty() ? 0 : *std::min_element(v.begin(), v.end());
    f[name + "_max"] = v.empty() ? 0 : *std::max_element(v.begin(), v.end());
    double s = 0;
    for (auto x : v) s += x;
    f[name + "_mean"] = v.empty() ? 0 : s / static_cast<double>(v.size());
  };
  stats("nnz_per_row", nnz);
  stats("nnz_blocks_per_row", blocks);
  stats("warp_load", load);
  stats("same_cache_lines", same);
  stats("distinct_cache_lines_per_warp", distinct);
  stats("total_cache_lines_per_warp", total);
  stats("adjacent_vector_distance", adjacent);
  return f;
}

// MatXtract Table 2 TopK and HotR of one side, from a full descending sort of the lengths.
inline std::map<std::string, double> naive_skew(std::vector<std::int64_t> len,
                                                const std::string& side) {
  std::sort(len.begin(), len.end(), std::greater<>());
  std::int64_t nnz = 0;
  for (auto l : len) nnz += l;
  const double n = static_cast<double>(len.size());
  const double mu = len.empty() ? 0 : static_cast<double>(nnz) / n;
  std::map<std::string, double> f;
  for (std::int64_t k : {1, 2, 3, 4, 5, 10, 50, 100, 200, 300}) {
    const double kth =
        k <= static_cast<std::int64_t>(len.size()) ? static_cast<double>(len[k - 1]) : 0;
    f[side + "_top" + std::to_string(k)] = mu == 0 ? 0 : kth / mu;
  }
  for (std::int64_t r = 10; r <= 90; r += 10) {
    std::int64_t i = 0, prefix = 0;
    while (nnz > 0 && 100 * prefix < r * nnz) prefix += len[i++];
    f[side + "_hot" + std::to_string(r)] = len.empty() ? 0 : static_cast<double>(i) / n;
  }
  return f;
}

}  // namespace sparsetune::test
