#include "models/stream_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sparsetune::models {

double pipeline_time(const StreamCosts& c, double n) {
  if (c.kernel_s >= c.h2d_s) return c.h2d_s / n + c.kernel_s + c.d2h_s / n + c.lambda_s * n;
  return c.h2d_s + c.kernel_s / n + c.d2h_s / n + c.lambda_s * n;
}

double continuous_optimum(const StreamCosts& c) {
  const double num = c.kernel_s >= c.h2d_s ? c.h2d_s + c.d2h_s : c.kernel_s + c.d2h_s;
  if (c.lambda_s <= 0) return std::numeric_limits<double>::infinity();
  return std::sqrt(num / c.lambda_s);
}

int best_stream_count(const StreamCosts& c, int max_streams) {
  max_streams = std::max(1, max_streams);
  const double x = std::min(continuous_optimum(c), static_cast<double>(max_streams));
  // Convex: the integer optimum is one of the two integers around the continuous one.
  const int lo = std::clamp(static_cast<int>(std::floor(x)), 1, max_streams);
  const int hi = std::clamp(lo + 1, 1, max_streams);
  return pipeline_time(c, hi) < pipeline_time(c, lo) ? hi : lo;
}

}  // namespace sparsetune::models
