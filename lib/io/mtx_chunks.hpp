#pragma once
// The coordinate section of a Matrix Market file, parsed in chunks cut at line boundaries
// (internal to the reader): each chunk counts its lines, so errors keep their true line numbers;
// checked chunks are then joined into a COO or straight into a CSR.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/convert.hpp"
#include "core/error.hpp"
#include "core/matrix.hpp"
#include "io/mtx_header.hpp"
#include "io/parallel_for.hpp"
#include "io/text_scan.hpp"

namespace sparsetune::io::detail {

// One piece of the coordinate section, split at a line boundary and parsed on its own thread.
struct MtxChunk {
  const char* begin = nullptr;
  const char* end = nullptr;
  std::vector<std::int64_t> row, col;  // 0-based
  std::vector<double> val;
  std::int64_t lines = 0;    // newlines consumed
  std::int64_t offdiag = 0;  // entries off the diagonal (mirrored for symmetric files)
  bool failed = false;
  std::int64_t err_line = 0;  // 1-based within the chunk
  std::string err;
};

inline const char* next_line(const char* p, const char* end) {
  const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
  return nl ? static_cast<const char*>(nl) + 1 : end;
}

// The message for a token that failed to parse as the `what` of an entry line of `want` tokens
// (`integer`: an index, or a value of an integer file).
std::string number_error(NumStatus s, const char* what, const char* p, const char* end, int want,
                         bool integer);

// Parses one chunk with the parser specialised for the file's field and symmetry; `per_byte` is
// the expected number of entries per byte of text, used to size the buffers.
void parse_mtx_chunk(MtxChunk& c, const MtxInfo& info, double per_byte);

// Local line number (1-based) of the n-th (0-based) entry line of a chunk's text.
std::int64_t nth_entry_line(const char* p, const char* end, std::int64_t n);

// Checks the parsed chunks (in file order), reporting what a line-by-line reader would meet
// first: a surplus entry or a bad line.
template <class Parts>
void check_parts(const Parts& parts, const MtxHeader& h, const std::string& src) {
  const MtxInfo& info = h.info;
  const int chunks = static_cast<int>(parts.size());
  std::int64_t first_line = h.size_line + 1, entries = 0;
  for (int k = 0; k < chunks; ++k) {
    const MtxChunk& c = parts[k];
    const auto n = static_cast<std::int64_t>(c.row.size());
    if (entries + n > info.stored_entries)
      throw InputError(
          src, first_line + nth_entry_line(c.begin, c.end, info.stored_entries - entries) - 1,
          "more entries than the " + std::to_string(info.stored_entries) + " declared on line " +
              std::to_string(h.size_line));
    if (c.failed) throw InputError(src, first_line + c.err_line - 1, c.err);
    entries += n;
    first_line += c.lines;
  }
  if (entries < info.stored_entries)
    throw InputError(src, h.size_line,
                     "the size line declares " + std::to_string(info.stored_entries) +
                         " entries but the file has only " + std::to_string(entries));
}

// Concatenates checked chunks into one COO, mirroring as the symmetry says.
template <class Parts>
Coo64 assemble_coo(Parts& parts, const MtxHeader& h, int threads) {
  const MtxInfo& info = h.info;
  const int chunks = static_cast<int>(parts.size());
  const bool mirror = info.symmetry != Symmetry::general;
  const double sign = info.symmetry == Symmetry::skew_symmetric ? -1.0 : 1.0;
  std::vector<std::int64_t> offset(chunks + 1, 0);
  for (int k = 0; k < chunks; ++k)
    offset[k + 1] = offset[k] + static_cast<std::int64_t>(parts[k].row.size()) +
                    (mirror ? parts[k].offdiag : 0);
  Coo64 a;
  a.rows = info.rows;
  a.cols = info.cols;
  a.row.resize(offset[chunks]);
  a.col.resize(offset[chunks]);
  a.val.resize(offset[chunks]);
  parallel_for(chunks, threads, [&](int k) {
    MtxChunk& c = parts[k];
    std::int64_t o = offset[k];
    const bool pattern = c.val.empty();
    for (std::size_t e = 0; e < c.row.size(); ++e) {
      const std::int64_t i = c.row[e], j = c.col[e];
      const double v = pattern ? 1.0 : c.val[e];
      a.row[o] = i;
      a.col[o] = j;
      a.val[o++] = v;
      if (mirror && i != j) {
        a.row[o] = j;
        a.col[o] = i;
        a.val[o++] = sign * v;
      }
    }
    c = MtxChunk{};  // release the chunk's memory as soon as it is copied
  });
  return a;
}

// Builds the CSR straight from checked chunks (no intermediate COO): a counting pass, then a
// scatter in file order, so each row holds its entries in the order a COO would have had them;
// then rows are sorted and duplicates summed. Sets expanded_entries and duplicates.
template <class Parts>
Csr64 assemble_csr(Parts& parts, MtxHeader& h) {
  MtxInfo& info = h.info;
  const bool mirror = info.symmetry != Symmetry::general;
  const double sign = info.symmetry == Symmetry::skew_symmetric ? -1.0 : 1.0;
  Csr64 a;
  a.rows = info.rows;
  a.cols = info.cols;
  a.row_ptr.assign(static_cast<std::size_t>(info.rows) + 1, 0);
  auto& ptr = a.row_ptr;
  for (const MtxChunk& c : parts)
    for (std::size_t e = 0; e < c.row.size(); ++e) {
      ++ptr[c.row[e] + 1];
      if (mirror && c.row[e] != c.col[e]) ++ptr[c.col[e] + 1];
    }
  for (std::int64_t r = 0; r < a.rows; ++r) ptr[r + 1] += ptr[r];
  const std::int64_t total = ptr[a.rows];
  a.col_idx.resize(total);
  a.val.resize(total);
  // ptr[r] serves as row r's insertion cursor; afterwards it holds the start of row r + 1.
  for (MtxChunk& c : parts) {
    const bool pattern = c.val.empty();
    for (std::size_t e = 0; e < c.row.size(); ++e) {
      const std::int64_t i = c.row[e], j = c.col[e];
      const double v = pattern ? 1.0 : c.val[e];
      std::int64_t k = ptr[i]++;
      a.col_idx[k] = j;
      a.val[k] = v;
      if (mirror && i != j) {
        k = ptr[j]++;
        a.col_idx[k] = i;
        a.val[k] = sign * v;
      }
    }
    c = MtxChunk{};
  }
  for (std::int64_t r = a.rows; r > 0; --r) ptr[r] = ptr[r - 1];
  ptr[0] = 0;
  sparsetune::detail::sort_rows(a);
  info.duplicates = sparsetune::detail::merge_duplicates(a);
  info.expanded_entries = total;
  return a;
}

}  // namespace sparsetune::io::detail
