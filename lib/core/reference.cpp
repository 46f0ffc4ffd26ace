#include "core/reference.hpp"

#include <cmath>

namespace sparsetune {

SparseTensor sptv_reference(const SparseTensor& x, int mode, const std::vector<double>& v) {
  if (mode < 0 || mode >= x.order())
    throw Error("sptv: mode " + std::to_string(mode) + " out of range for an order-" +
                std::to_string(x.order()) + " tensor");
  if (static_cast<std::int64_t>(v.size()) != x.dims[mode])
    throw Error("sptv: v has " + std::to_string(v.size()) + " entries, mode " +
                std::to_string(mode) + " has size " + std::to_string(x.dims[mode]));
  SparseTensor s = x;
  sort_by_modes(s, fiber_mode_order(s.order(), mode));
  const auto ptr = fiber_ptr(s, mode);
  SparseTensor y;
  for (int m = 0; m < x.order(); ++m)
    if (m != mode) y.dims.push_back(x.dims[m]);
  y.idx.resize(y.dims.size());
  for (std::size_t f = 0; f + 1 < ptr.size(); ++f) {
    double sum = 0.0;
    for (auto k = ptr[f]; k < ptr[f + 1]; ++k) sum += s.val[k] * v[s.idx[mode][k]];
    int out_mode = 0;
    for (int m = 0; m < x.order(); ++m)
      if (m != mode) y.idx[out_mode++].push_back(s.idx[m][ptr[f]]);
    y.val.push_back(sum);
  }
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
