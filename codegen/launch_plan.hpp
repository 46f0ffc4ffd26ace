#pragma once
// From a generated format and its kernels to the runtime's launch plan (runtime/launch_plan.hpp
// describes the file): the format's stored arrays as device buffers, one launch per part with
// work, arguments exactly as kernel.cu declares them (x, y, then the part's stored arrays in name
// order), y zeroed before each run as kernel.h does (unless the format is store-only), and an
// fp64 reference to check against.
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/kernel_builder.hpp"
#include "core/matrix.hpp"
#include "graph/format.hpp"
#include "io/safetensors.hpp"

namespace sparsetune::codegen {

// One kernel argument: a buffer ("x", "y", "p<part>.<array>") or a scalar of `scalar` type
// ("f64", "f32" or "i64").
struct PlanArg {
  std::string buffer;
  std::string scalar;  // empty for a buffer
  double f = 0.0;
  std::int64_t i = 0;
  static PlanArg buf(std::string name) { return {std::move(name), "", 0.0, 0}; }
  bool operator==(const std::string& name) const { return scalar.empty() && buffer == name; }
};

struct PlanLaunch {
  std::string kernel;
  std::int64_t grid = 0;
  std::int64_t grid_y = 1;  // SpMM: the column tiles
  int block = 0;
  std::int64_t shared_bytes = 0;  // the generated kernels use static shared memory only
  std::vector<PlanArg> args;      // parts: x, y, alpha, beta, then the stored arrays
};

// y = alpha A x + beta y (cuSPARSE's convention). beta = 0 never reads y.
struct Scaling {
  double alpha = 1.0, beta = 0.0;
};

struct SpmvPlan {
  std::string name;
  std::vector<PlanLaunch> launches;
  io::SafetensorsFile arrays;    // the stored arrays, named "p<part>.<array>"
  std::string x_dtype, y_dtype;  // F64/F32/F16 and F64/F32 (f16 formats accumulate in fp32)
  std::string check_dtype;       // the format's dtype: its tolerance applies
  std::int64_t rows = 0, cols = 0, nnz = 0;
  int value_bytes = 8;
  // SpMM (op "spmm"): x is B (cols x n) and y is C (rows x n), both packed in the format's
  // layout: row-major with ldb = ldc = n, or column-major ("col") with ldb = cols, ldc = rows;
  // each part's kernel runs over (its grid, column tiles).
  std::string op = "spmv";
  std::int64_t n = 1;
  std::string layout = "row";
  Scaling scaling;
  // The kernels add into y and beta is 0: y is zeroed before each run (kernel.h does the same).
  // False for store-only formats, whose kernels write every row exactly once, and when beta != 0
  // (the first launch then scales y by beta).
  bool zero_output = true;
  // beta != 0: y starts each run as the inputs' "y_init" (the user's y before the call).
  bool init_output = false;
};

// Throws Error when the kernels do not match the format's parts or a grid is too large. `n`: the
// columns of B for an SpMM format (1 for SpMV).
SpmvPlan make_launch_plan(const graph::Format& f, const KernelSource& k,
                          const std::string& name = "", const Scaling& s = {}, std::int64_t n = 1);

// The inputs of a checking run: x rounded to the format's value type and y_ref = A·x in fp64
// from the values the GPU sees.
struct PlanInputs {
  std::vector<double> x, y_ref;
  std::vector<double> y_init;  // y before the call, when beta != 0
  bool has_y_init = false;     // (a matrix of no rows has an empty one)
  std::int64_t max_len = 0;    // longest row, for the tolerance
};
// Turns y_ref = A x into alpha A x + beta y_init, with y_init random from `seed` and rounded to
// y's type (fp64 for f64 formats, else fp32). Nothing changes for alpha = 1, beta = 0.
void apply_scaling(PlanInputs& in, const std::string& dtype, const Scaling& s,
                   std::uint64_t seed = 2);
// x random in [-1, 1) from `seed`, rounded to `dtype` (f64, f32, f16), never all zero.
std::vector<double> plan_x(std::int64_t cols, const std::string& dtype, std::uint64_t seed = 1);
// With the matrix: its values rounded to `dtype` as the format stores them. Throws Error when x
// does not fit.
PlanInputs spmv_plan_inputs(const std::string& dtype, const Csr64& a, std::vector<double> x);
// SpMM: B random in [-1, 1) from `seed` (cols x n, packed row-major, or column-major with
// `col_major`, rounded to `dtype`) as x, and y_ref = A·B in fp64 from the values the GPU sees,
// in the same layout.
PlanInputs spmm_plan_inputs(const std::string& dtype, const Csr64& a, std::int64_t n,
                            std::uint64_t seed = 1, bool col_major = false);
// The same without the matrix: the reference is the CPU interpreter's fp64 C = A·B from the
// format's own arrays (in the format's layout).
PlanInputs spmm_plan_inputs(const graph::Format& f, std::int64_t n, std::uint64_t seed = 1);
// Without it: the reference is the CPU interpreter's fp64 walk of the format's own arrays, and the
// row lengths are counted the same way (non-zero stored values per row).
PlanInputs spmv_plan_inputs(const graph::Format& f, std::vector<double> x);

// "x" (in the value type of `dtype`), "y_ref" (F64) and, when set, "y_init" (y's type) as their
// own file, shared by the plans of one matrix.
io::SafetensorsFile plan_inputs_file(const std::string& dtype, const PlanInputs& in);
// The plan file; `cubin` may be empty (handed over separately) and `inputs` null (a separate
// inputs file); `max_len` sets the tolerance.
io::SafetensorsFile plan_file(const SpmvPlan& p, const std::vector<char>& cubin,
                              std::int64_t max_len, const PlanInputs* inputs = nullptr);

}  // namespace sparsetune::codegen
