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
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  // Tiny chunks on two threads put chunk boundaries everywhere; gzip input goes through the
  // streaming decompress-while-parsing path.
  io::MtxInfo info;
  Coo64 c;
  std::string chunked_error;
  try {
    c = io::parse_matrix_market_bytes(bytes, "fuzz.mtx", &info, io::MtxParseOptions{2, 7});
  } catch (const Error& e) {
    chunked_error = e.what();
  }
  // The sequential parse must agree, down to the error message and line. (For gzip input that
  // fails, which error comes first may differ: the streaming path checks the header early.)
  if (io::is_gzip(bytes) && !chunked_error.empty()) return 0;
  Coo64 s;
  std::string sequential_error;
  try {
    const std::string text = io::is_gzip(bytes) ? io::gunzip(bytes, "fuzz.mtx") : bytes;
    s = io::parse_matrix_market_bytes(text, "fuzz.mtx", nullptr, io::MtxParseOptions{1, 1u << 20});
  } catch (const Error& e) {
    sequential_error = e.what();
  }
  FUZZ_ASSERT(chunked_error == sequential_error);
  if (!chunked_error.empty()) return 0;
  FUZZ_ASSERT(s.row == c.row && s.col == c.col && s.val == c.val);

  FUZZ_ASSERT(c.rows == info.rows && c.cols == info.cols);
  FUZZ_ASSERT(c.nnz() == info.expanded_entries);
  FUZZ_ASSERT(c.nnz() >= info.stored_entries);
  for (std::int64_t k = 0; k < c.nnz(); ++k) {
    FUZZ_ASSERT(c.row[k] >= 0 && c.row[k] < c.rows);
    FUZZ_ASSERT(c.col[k] >= 0 && c.col[k] < c.cols);
  }
  if (c.rows > (1 << 16)) return 0;  // a CSR needs rows + 1 offsets: keep memory small
  try {
    std::int64_t dups = 0;
    const Csr64 a = coo_to_csr<std::int64_t, std::int64_t>(c, &dups);
    // The direct CSR path must build the same matrix with the same duplicate count.
    io::MtxInfo direct_info;
    const Csr64 direct =
        io::parse_matrix_market_csr(bytes, "fuzz.mtx", &direct_info, io::MtxParseOptions{2, 7});
    FUZZ_ASSERT(same_matrix(a, direct));
    FUZZ_ASSERT(direct_info.duplicates == dups && direct_info.expanded_entries == c.nnz());
    const Coo64 again = io::parse_matrix_market(io::format_matrix_market(a), "again.mtx");
    FUZZ_ASSERT(same_matrix(a, coo_to_csr<std::int64_t, std::int64_t>(again)));
  } catch (const Error& e) {
    std::fprintf(stderr, "round trip failed: %s\n", e.what());
    std::abort();
  }
  return 0;
}
