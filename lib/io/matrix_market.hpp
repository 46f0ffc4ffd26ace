#pragma once
// Matrix Market (.mtx, .mtx.gz) reading and writing. Every rule and every error is listed in
// docs/input-formats.md. Symmetric, skew-symmetric and hermitian files are expanded to the full
// matrix; complex matrices are refused.
#include <cstdint>
#include <string>
#include <string_view>

#include "core/matrix.hpp"
#include "io/matrix_file.hpp"

namespace sparsetune::io {

enum class Field { real, integer, pattern, complex };
enum class Symmetry { general, symmetric, skew_symmetric, hermitian };

std::string to_string(Field f);
std::string to_string(Symmetry s);

// What the banner and size line of a file said, and what reading it produced.
struct MtxInfo {
  bool coordinate = true;  // false for the dense "array" format
  Field field = Field::real;
  Symmetry symmetry = Symmetry::general;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t stored_entries = 0;    // entries written in the file
  std::int64_t expanded_entries = 0;  // after mirroring, before duplicates are summed
  std::int64_t duplicates = 0;        // entries merged by summing (set by read_matrix)
};

// Knobs of the parallel parser; the defaults suit real files. Tests shrink the chunk size to
// exercise chunk boundaries on small inputs.
struct MtxParseOptions {
  int threads = 0;                         // 0: one per hardware thread (at most 8)
  std::size_t min_chunk_bytes = 1u << 20;  // chunks of at least this size (4x that when gzip)
};

// Parses Matrix Market text held in memory; `source` names it in error messages. Returns the
// entries after mirroring, in file order (each mirrored entry right after its original),
// unsorted and with duplicates not yet summed.
Coo64 parse_matrix_market(std::string_view text, const std::string& source, MtxInfo* info = nullptr,
                          const MtxParseOptions& options = {});

// Parses a file's raw bytes: gzip (recognised by its magic bytes) is decompressed while it is
// parsed; a safetensors container is refused with a clear error.
Coo64 parse_matrix_market_bytes(std::string_view bytes, const std::string& source,
                                MtxInfo* info = nullptr, const MtxParseOptions& options = {});

// Like parse_matrix_market_bytes, but builds the sorted CSR directly from the parsed pieces,
// without the intermediate COO: less memory and time for large files. Duplicates (after
// mirroring) are summed; `info->duplicates` says how many. No warning is printed.
Csr64 parse_matrix_market_csr(std::string_view bytes, const std::string& source,
                              MtxInfo* info = nullptr, const MtxParseOptions& options = {});

// Reads a .mtx file, gzip or not (detected by content).
Coo64 read_matrix_market(const std::string& path, MtxInfo* info = nullptr);

// The text of a general real coordinate file, one entry per line in row-major order, values
// printed like printf's %.17g (exact round trip). Throws Error on a non-finite value.
std::string format_matrix_market(const Csr64& a);

// Writes `a` atomically; gzip-compressed when the name ends in ".gz".
void write_matrix_market(const std::string& path, const Csr64& a);

}  // namespace sparsetune::io
