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

struct PlanLaunch {
  std::string kernel;
  std::int64_t grid = 0;
  int block = 0;
  std::int64_t shared_bytes = 0;  // the generated kernels use static shared memory only
  std::vector<std::string> args;  // buffer names: "x", "y", "p<part>.<array>"
};

struct SpmvPlan {
  std::string name;
  std::vector<PlanLaunch> launches;
  io::SafetensorsFile arrays;    // the stored arrays, named "p<part>.<array>"
  std::string x_dtype, y_dtype;  // F64/F32/F16 and F64/F32 (f16 formats accumulate in fp32)
  std::string check_dtype;       // the format's dtype: its tolerance applies
  std::int64_t rows = 0, cols = 0, nnz = 0;
  int value_bytes = 8;
  // The kernels add into y (kernel.h zeroes it before each run); false for store-only formats,
  // whose kernels write every row exactly once.
  bool zero_output = true;
};

// Throws Error when the kernels do not match the format's parts or a grid is too large.
SpmvPlan make_launch_plan(const graph::Format& f, const KernelSource& k,
                          const std::string& name = "");

// The inputs of a checking run: x rounded to the format's value type and y_ref = A·x in fp64
// from the values the GPU sees.
struct PlanInputs {
  std::vector<double> x, y_ref;
  std::int64_t max_len = 0;  // longest row, for the tolerance
};
// x random in [-1, 1) from `seed`, rounded to `dtype` (f64, f32, f16), never all zero.
std::vector<double> plan_x(std::int64_t cols, const std::string& dtype, std::uint64_t seed = 1);
// With the matrix: its values rounded to `dtype` as the format stores them. Throws Error when x
// does not fit.
PlanInputs spmv_plan_inputs(const std::string& dtype, const Csr64& a, std::vector<double> x);
// Without it: the reference is the CPU interpreter's fp64 walk of the format's own arrays, and the
// row lengths are counted the same way (non-zero stored values per row).
PlanInputs spmv_plan_inputs(const graph::Format& f, std::vector<double> x);

// "x" (in the value type of `dtype`) and "y_ref" (F64) as their own file, shared by the plans of
// one matrix.
io::SafetensorsFile plan_inputs_file(const std::string& dtype, const PlanInputs& in);
// The plan file; `cubin` may be empty (handed over separately) and `inputs` null (a separate
// inputs file); `max_len` sets the tolerance.
io::SafetensorsFile plan_file(const SpmvPlan& p, const std::vector<char>& cubin,
                              std::int64_t max_len, const PlanInputs* inputs = nullptr);

}  // namespace sparsetune::codegen
