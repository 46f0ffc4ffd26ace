#include "core/operand_checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "core/memory.hpp"

namespace sparsetune {

double largest_value(const std::string& dtype) {
  if (dtype == "f16") return 65504.0;
  if (dtype == "f32") return static_cast<double>(std::numeric_limits<float>::max());
  if (dtype == "f64") return std::numeric_limits<double>::max();
  throw Error("value type must be f64, f32 or f16 (got '" + dtype + "')");
}

void check_values_fit(const std::vector<double>& vals, const std::string& dtype,
                      const std::string& source) {
  const double limit = largest_value(dtype);
  double top = 0;
  bool nan = false;
  for (double v : vals) {
    if (std::isnan(v))
      nan = true;
    else
      top = std::max(top, std::abs(v));
  }
  if (nan) throw Error(source + ": a value that is not a number");
  if (top <= limit) return;
  char buf[160];
  std::snprintf(buf, sizeof buf, "values up to %.6g exceed fp%s's range (%.6g); use %s", top,
                dtype.c_str() + 1, limit, dtype == "f16" ? "--dtype f32 or f64" : "--dtype f64");
  throw Error(source + ": " + buf);
}

void check_dense_operands(double rows, double cols, double n, const std::string& dtype,
                          const std::string& what) {
  const double value_bytes = dtype == "f64" ? 8.0 : dtype == "f32" ? 4.0 : 2.0;
  const double values = (rows + cols) * std::max(n, 1.0);
  const std::string operands =
      n > 1 ? "B and C of " + std::to_string(static_cast<long long>(n)) + " columns" : "x and y";
  char dims[80];
  std::snprintf(dims, sizeof dims, "%.0f x %.0f", rows, cols);
  check_memory_need(values * (8.0 + value_bytes), what + " (" + dims + ", " + operands + ")");
}

}  // namespace sparsetune
