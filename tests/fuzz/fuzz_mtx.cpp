// Fuzzes the Matrix Market reader: any input either parses into entries inside the declared
// shape, which then survive a write/read round trip, or raises sparsetune::Error.
#include <spdlog/spdlog.h>

#include <cstdint>
#include <string>

#include "core/convert.hpp"
#include "core/error.hpp"
#include "fuzz_check.hpp"
#include "io/file_bytes.hpp"
#include "io/matrix_market.hpp"

using namespace sparsetune;

// Duplicate-entry warnings would flood the fuzzer's output.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    if (io::is_gzip(text)) text = io::gunzip(text, "fuzz.mtx.gz");
    // Tiny chunks on two threads put chunk boundaries everywhere.
    io::MtxInfo info;
    const Coo64 c = io::parse_matrix_market(text, "fuzz.mtx", &info, io::MtxParseOptions{2, 7});
    FUZZ_ASSERT(c.rows == info.rows && c.cols == info.cols);
    FUZZ_ASSERT(c.nnz() == info.expanded_entries);
    FUZZ_ASSERT(c.nnz() >= info.stored_entries || !info.coordinate);
    for (std::int64_t k = 0; k < c.nnz(); ++k) {
      FUZZ_ASSERT(c.row[k] >= 0 && c.row[k] < c.rows);
      FUZZ_ASSERT(c.col[k] >= 0 && c.col[k] < c.cols);
    }
    // The sequential parse must agree with the chunked one.
    const Coo64 s =
        io::parse_matrix_market(text, "fuzz.mtx", nullptr, io::MtxParseOptions{1, 1u << 20});
    FUZZ_ASSERT(s.row == c.row && s.col == c.col && s.val == c.val);
    if (c.rows > (1 << 16)) return 0;  // a CSR needs rows + 1 offsets: keep memory small
    const Csr64 a = coo_to_csr<std::int64_t, std::int64_t>(c);
    const Coo64 again = io::parse_matrix_market(io::format_matrix_market(a), "again.mtx");
    FUZZ_ASSERT(same_matrix(a, coo_to_csr<std::int64_t, std::int64_t>(again)));
  } catch (const Error&) {
  }
  return 0;
}
