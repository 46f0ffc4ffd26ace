#pragma once
// What a matrix's kernels need of their operands, checked before any work: values that fit the
// value type they are stored in (a value past its range is stored as inf, and the kernel then
// computes infs or NaNs), and dense vectors this machine can hold.
#include <string>
#include <vector>

namespace sparsetune {

// The largest finite magnitude of "f16" (65504), "f32" or "f64"; throws Error on another name.
double largest_value(const std::string& dtype);

// Throws Error("<source>: values up to V exceed fp16's range (65504); ...") when a value of
// `vals` is beyond `dtype`'s range (or not finite).
void check_values_fit(const std::vector<double>& vals, const std::string& dtype,
                      const std::string& source);

// Checks the dense operands of an SpMV (n = 1) or SpMM of n columns on a rows x cols matrix: x or
// B (cols x n) and y or C (rows x n), each held as fp64 for the reference and in `dtype`. Throws
// Error("<what> (R x C, x and y) needs about X GiB of memory, ...") when they exceed this
// machine's memory; a matrix whose vectors could not be sized at all (2^63 columns) is refused
// the same way, never an internal error.
void check_dense_operands(double rows, double cols, double n, const std::string& dtype,
                          const std::string& what);

}  // namespace sparsetune
