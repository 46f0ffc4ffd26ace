// Fuzzes the format binary reader (what `sparsetune run` and the tuning steps read back): any
// input either becomes a Format whose every array, offset and column the reader checked, so that
// the CPU interpreter walks it without leaving an array, or raises sparsetune::Error.
#include <spdlog/spdlog.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "fuzz_check.hpp"
#include "graph/format.hpp"
#include "graph/interpreter.hpp"
#include "io/safetensors.hpp"

using namespace sparsetune;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  graph::Format f;
  try {
    f = graph::from_safetensors(io::parse_safetensors(bytes, "fuzz.safetensors"), "fuzz");
  } catch (const Error&) {
    return 0;
  }
  FUZZ_ASSERT(f.rows >= 0 && f.cols >= 0 && f.nnz >= 0);
  // A walk with x all ones either succeeds or names the inconsistency; it never reads outside
  // an array (AddressSanitizer watches).
  if (f.rows > (1 << 20) || f.cols > (1 << 20)) return 0;
  try {
    const auto y = graph::interpret(f, std::vector<double>(f.cols, 1.0));
    FUZZ_ASSERT(static_cast<std::int64_t>(y.size()) == f.rows);
  } catch (const Error&) {
  }
  return 0;
}
