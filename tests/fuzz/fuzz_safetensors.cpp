// Fuzzes the safetensors reader and the matrix container on top of it: any input either parses
// into arrays that tile the buffer and re-serialise to an equivalent file, or raises
// sparsetune::Error.
#include <spdlog/spdlog.h>

#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "fuzz_check.hpp"
#include "io/matrix_container.hpp"
#include "io/safetensors.hpp"

using namespace sparsetune;

// Duplicate-entry warnings would flood the fuzzer's output.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  io::SafetensorsFile f;
  try {
    f = io::parse_safetensors(bytes, "fuzz.safetensors");
  } catch (const Error&) {
    return 0;
  }
  std::size_t total = 0;
  for (const auto& a : f.arrays) {
    FUZZ_ASSERT(a.elements() >= 0);
    FUZZ_ASSERT(static_cast<std::size_t>(a.elements()) * io::dtype_size(a.dtype) == a.bytes.size());
    total += a.bytes.size();
  }
  FUZZ_ASSERT(total <= size);
  const io::SafetensorsFile g = io::parse_safetensors(io::serialize_safetensors(f), "again");
  FUZZ_ASSERT(g.arrays.size() == f.arrays.size() && g.metadata == f.metadata);
  for (std::size_t k = 0; k < f.arrays.size(); ++k) {
    FUZZ_ASSERT(g.arrays[k].name == f.arrays[k].name && g.arrays[k].dtype == f.arrays[k].dtype);
    FUZZ_ASSERT(g.arrays[k].shape == f.arrays[k].shape && g.arrays[k].bytes == f.arrays[k].bytes);
  }
  try {
    // A COO container with an enormous row count is valid but needs rows + 1 offsets.
    auto rows = f.metadata.find("rows");
    if (rows != f.metadata.end() && rows->second.size() > 6) return 0;
    const Csr64 a = io::matrix_from_safetensors(f, "fuzz.safetensors");
    for (std::int64_t r = 0; r < a.rows; ++r)
      for (std::int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
        FUZZ_ASSERT(a.col_idx[k] >= 0 && a.col_idx[k] < a.cols);
        FUZZ_ASSERT(k == a.row_ptr[r] || a.col_idx[k] > a.col_idx[k - 1]);
      }
  } catch (const Error&) {
  }
  return 0;
}
