#include "core/reference.hpp"

#include <algorithm>
#include <cmath>

#include "core/parallel_for.hpp"

namespace sparsetune {

SparseTensor sptv_reference(const SparseTensor& x, int mode, const std::vector<double>& v) {
  auto order = fiber_mode_order(x.order(), mode < 0 || mode >= x.order() ? 0 : mode);
  order.pop_back();
  return sptv_reference(x, mode, v, order);
}

SparseTensor sptv_reference(const SparseTensor& x, int mode, const std::vector<double>& v,
                            const std::vector<int>& y_order) {
  if (mode < 0 || mode >= x.order())
    throw Error("sptv: mode " + std::to_string(mode) + " out of range for an order-" +
                std::to_string(x.order()) + " tensor");
  if (static_cast<std::int64_t>(v.size()) != x.dims[mode])
    throw Error("sptv: v has " + std::to_string(v.size()) + " entries, mode " +
                std::to_string(mode) + " has size " + std::to_string(x.dims[mode]));
  std::vector<int> order = y_order;
  order.push_back(mode);
  std::vector<int> sorted_modes = order;
  std::sort(sorted_modes.begin(), sorted_modes.end());
  for (int m = 0; m < x.order(); ++m)
    if (static_cast<int>(sorted_modes.size()) != x.order() || sorted_modes[m] != m)
      throw Error("sptv: the order of Y must list every mode but " + std::to_string(mode) +
                  " once");
  // Entries in fiber order through a permutation: X itself is neither copied nor moved.
  const std::vector<std::int64_t> perm = sorted_order(x, order);
  const std::int64_t n = x.nnz();
  const int threads = threads_for(n * x.order());
  const std::vector<std::int64_t> start = fiber_ptr(x, perm, mode);
  const auto fibers = static_cast<std::int64_t>(start.size()) - 1;
  SparseTensor y;
  for (int m = 0; m < x.order(); ++m)
    if (m != mode) y.dims.push_back(x.dims[m]);
  y.idx.assign(y.dims.size(), std::vector<std::int64_t>(fibers));
  y.val.assign(fibers, 0.0);
  parallel_ranges(fibers, threads, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t f = lo; f < hi; ++f) {
      double sum = 0.0;
      for (auto k = start[f]; k < start[f + 1]; ++k)
        sum += x.val[perm[k]] * v[x.idx[mode][perm[k]]];
      int out_mode = 0;
      for (int m = 0; m < x.order(); ++m)
        if (m != mode) y.idx[out_mode++][f] = x.idx[m][perm[start[f]]];
      y.val[f] = sum;
    }
  });
  return y;
}

double relative_l2_error(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return INFINITY;
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = a[i] - b[i];
    num += d * d;
    den += b[i] * b[i];
  }
  if (std::isnan(num)) return NAN;
  return den > 0.0 ? std::sqrt(num / den) : std::sqrt(num);
}

}  // namespace sparsetune
