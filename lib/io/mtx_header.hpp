#pragma once
// The banner and size line of a Matrix Market file (internal to the reader).
#include <cstdint>
#include <string>
#include <string_view>

#include "io/matrix_market.hpp"

namespace sparsetune::io::detail {

struct MtxHeader {
  MtxInfo info;
  std::int64_t size_line = 0;  // line number of the size line
  std::size_t data_pos = 0;    // offset of the first byte after it
};

// Parses the banner, the comments and the size line; throws InputError naming `src` and the line.
MtxHeader parse_mtx_header(std::string_view text, const std::string& src);

// Throws InputError at the size line when the CSR of the matrix the header declares (row
// pointers and a cursor per row, the expanded entries) would not fit in this machine's memory:
// the process would otherwise be killed half-way instead of failing with a message.
void check_csr_memory(const MtxHeader& h, const std::string& src);

// Finds the end of the size line in a text that grows by appending, resuming where the previous
// call stopped so that a long header (or a long line without a newline) is scanned only once.
struct SizeLineFinder {
  std::size_t pos = 0;       // start of the first line not yet examined
  std::size_t searched = 0;  // no newline in [pos, searched)
  bool banner = false;

  // Offset just past the size line once `text` holds it complete (newline included), else npos.
  std::size_t feed(std::string_view text);
};

}  // namespace sparsetune::io::detail
