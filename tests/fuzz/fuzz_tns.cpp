// Fuzzes the .tns reader: any input either parses into a sorted, duplicate-free tensor inside its
// dimensions, which survives a write/read round trip, or raises sparsetune::Error.
#include <spdlog/spdlog.h>

#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "fuzz_check.hpp"
#include "io/file_bytes.hpp"
#include "io/tns.hpp"

using namespace sparsetune;

// Duplicate-entry warnings would flood the fuzzer's output.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    if (io::is_gzip(text)) text = io::gunzip(text, "fuzz.tns.gz");
    const SparseTensor t = io::parse_tns(text, "fuzz.tns");
    FUZZ_ASSERT(t.order() >= 3 && t.order() <= io::kMaxTensorOrder);
    FUZZ_ASSERT(static_cast<int>(t.idx.size()) == t.order());
    for (int m = 0; m < t.order(); ++m) {
      FUZZ_ASSERT(static_cast<std::int64_t>(t.idx[m].size()) == t.nnz());
      for (auto i : t.idx[m]) FUZZ_ASSERT(i >= 0 && i < t.dims[m]);
    }
    for (std::int64_t k = 1; k < t.nnz(); ++k) {
      int m = 0;
      while (m < t.order() && t.idx[m][k] == t.idx[m][k - 1]) ++m;
      FUZZ_ASSERT(m < t.order() && t.idx[m][k] > t.idx[m][k - 1]);  // strictly increasing
    }
    const SparseTensor u = io::parse_tns(io::format_tns(t), "again.tns");
    FUZZ_ASSERT(u.dims == t.dims && u.idx == t.idx && u.val == t.val);
  } catch (const Error&) {
  }
  return 0;
}
