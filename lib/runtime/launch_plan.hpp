#pragma once
// A launch plan: everything the worker needs to run and check a set of kernels it knows nothing
// about — named device buffers (raw bytes with a dtype), the cubin, the launches in order with
// their arguments, the output y and the fp64 reference y_ref. Stored in the safetensors layout:
// one array per buffer, the cubin as the U8 array "__cubin__" (or handed over as its own file),
// and the plan itself as JSON text under the metadata key "sparsetune-plan":
//   {"name": "...",
//    "launches": [{"kernel": K, "grid": [x,y,z], "block": [x,y,z], "shared_bytes": S,
//                  "args": [{"buffer": NAME} | {"i32": v} | {"i64": v} | {"f32": v} | {"f64":
//                  v}]}],
//    "output": {"buffer": "y", "dtype": "F32", "length": ROWS, "zero": true, "init": ""},
//    "x": "x", "y_ref": "y_ref",
//    "check": {"dtype": "f32", "max_len": L},
//    "cost": {"op": "spmv" | "spmm", "n": N, "rows": R, "cols": C, "nnz": NNZ, "index_bytes": 4,
//    "value_bytes": 4}}
// The output buffer is allocated by the worker (never stored); "zero" asks for it to be zeroed
// before each run, inside the timed region, and a non-empty "init" names a buffer of the output's
// dtype and length copied into it instead (y's value before the call, for beta != 0). y_ref (F64,
// `length` values) stays on the host.
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sparsetune::runtime {

struct PlanBuffer {
  std::string dtype;  // F64 F32 F16 I64 I32 I16 I8 U64 U32 U16 U8
  std::vector<char> bytes;
};

struct PlanArg {
  enum class Kind { Buffer, I32, I64, F32, F64 };
  Kind kind = Kind::Buffer;
  std::string buffer;  // Kind::Buffer: a buffer's name or the output's
  std::int64_t i = 0;  // I32, I64
  double f = 0.0;      // F32, F64
};

struct PlanLaunch {
  std::string kernel;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  std::int64_t shared_bytes = 0;
  std::vector<PlanArg> args;
};

struct LaunchPlan {
  std::string name;
  std::map<std::string, PlanBuffer> buffers;
  std::vector<char> cubin;  // empty when the cubin travels as its own file
  std::vector<PlanLaunch> launches;
  std::string output = "y", output_dtype = "F32";
  std::int64_t output_length = 0;
  bool zero_output = false;
  std::string output_init;  // a buffer copied into the output before each run, or empty
  std::string x = "x", y_ref = "y_ref";
  std::string check_dtype = "f32";  // the tolerance's data type (stats.hpp)
  std::int64_t max_len = 0;         // longest dot product, for the tolerance
  std::string op = "spmv";          // spmv, or spmm: x is B (cols x n), the output C (rows x n)
  std::int64_t n = 1;
  std::int64_t rows = 0, cols = 0, nnz = 0;
  int index_bytes = 4, value_bytes = 4;
};

std::size_t plan_dtype_size(const std::string& dtype);  // 0 for an unknown dtype

nlohmann::json plan_to_json(const LaunchPlan& p);  // the "sparsetune-plan" metadata
// Fills every field but buffers and cubin; throws Error naming `source` for a malformed plan.
LaunchPlan plan_from_json(const nlohmann::json& j, const std::string& source);

// Checks names, dtypes, sizes and arguments; throws Error.
void validate_plan(const LaunchPlan& p, const std::string& source);

// Writes through a temporary file and a rename.
void write_plan(const std::filesystem::path& path, const LaunchPlan& p);
// Reads a plan; buffers missing from it (x, y_ref, ...) are taken from the `inputs` files, which
// hold buffers only (no plan metadata needed). Validates the result.
LaunchPlan read_plan(const std::filesystem::path& path,
                     const std::vector<std::filesystem::path>& inputs = {});
// The arrays of a file in this layout (a plan or an inputs file).
std::map<std::string, PlanBuffer> read_plan_buffers(const std::filesystem::path& path,
                                                    std::vector<char>* cubin = nullptr,
                                                    nlohmann::json* plan_json = nullptr);
// An inputs file: buffers only.
void write_plan_buffers(const std::filesystem::path& path,
                        const std::map<std::string, PlanBuffer>& buffers);

inline constexpr const char* kPlanMetadataKey = "sparsetune-plan";
inline constexpr const char* kPlanCubinArray = "__cubin__";

}  // namespace sparsetune::runtime
