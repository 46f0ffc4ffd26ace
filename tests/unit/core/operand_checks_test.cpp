// The operand checks made before a matrix is designed or measured: values past the value type's
// range, and dense vectors larger than any memory.
#include "core/operand_checks.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "core/error.hpp"

using namespace sparsetune;

TEST_CASE("values past the value type's range are refused by type and file", "[core]") {
  // fp16's largest finite value is 65504 (sign included); the next ones round to infinity.
  CHECK_NOTHROW(check_values_fit({1.0, -65504.0}, "f16", "a.mtx"));
  CHECK_THROWS_WITH(check_values_fit({1.0, 70000.0}, "f16", "a.mtx"),
                    Catch::Contains("a.mtx: values up to 70000 exceed fp16's range (65504)"));
  CHECK_THROWS_WITH(check_values_fit({-70000.0}, "f16", "a.mtx"), Catch::Contains("fp16"));
  const double fmax = std::numeric_limits<float>::max();
  CHECK_NOTHROW(check_values_fit({fmax, -fmax}, "f32", "b.mtx"));
  CHECK_THROWS_WITH(check_values_fit({1e300}, "f32", "b.mtx"),
                    Catch::Contains("b.mtx: values up to 1e+300 exceed fp32's range") &&
                        Catch::Contains("--dtype f64"));
  CHECK_NOTHROW(check_values_fit({1e300, -1e300}, "f64", "c.mtx"));
  CHECK_THROWS_WITH(check_values_fit({1.0, std::nan("")}, "f64", "c.mtx"),
                    Catch::Contains("c.mtx: a value that is not a number"));
  CHECK_THROWS_WITH(check_values_fit({1.0, HUGE_VAL}, "f64", "c.mtx"), Catch::Contains("inf"));
  CHECK_NOTHROW(check_values_fit({}, "f16", "empty.mtx"));
  CHECK_THROWS_WITH(check_values_fit({1.0}, "f8", "d.mtx"), Catch::Contains("f64, f32 or f16"));
  CHECK(largest_value("f16") == 65504.0);
  CHECK(largest_value("f32") == fmax);
}

TEST_CASE("dense operands larger than any memory are refused, not sized", "[core]") {
  CHECK_NOTHROW(check_dense_operands(1000, 1000, 1, "f64", "small.mtx"));
  CHECK_NOTHROW(check_dense_operands(1000, 1000, 128, "f32", "small.mtx"));
  // 2^63 columns: a std::vector of x could not even be sized.
  CHECK_THROWS_WITH(check_dense_operands(1, 9223372036854775807.0, 1, "f64", "wide.mtx"),
                    Catch::Contains("wide.mtx (1 x 9223372036854775808, x and y) needs about") &&
                        Catch::Contains("GiB of memory"));
  // SpMM: B and C of n columns, the sizes named.
  CHECK_THROWS_WITH(check_dense_operands(1e6, 1e6, 1e9, "f32", "m.mtx"),
                    Catch::Contains("B and C of 1000000000 columns"));
}
