#pragma once
// FROSTT .tns tensors: one entry per line, "i1 i2 ... iN value" with 1-based indices, '#'
// comments, optionally gzip-compressed (detected by content). An optional ParTI-style header
// (a line with the order, then a line with the N dimensions) is recognised; without it the
// dimensions are the largest index of each mode. docs/input-formats.md lists every rule.
#include <cstdint>
#include <string>
#include <string_view>

#include "core/tensor.hpp"

namespace sparsetune::io {

struct TnsInfo {
  bool header = false;              // the file declared its order and dimensions
  std::int64_t stored_entries = 0;  // entry lines in the file
  std::int64_t duplicates = 0;      // entries merged by summing
};

// The largest order accepted; a header claiming more is refused before anything is allocated.
inline constexpr int kMaxTensorOrder = 64;

// Parses .tns text held in memory; `source` names it in error messages. The result is sorted
// lexicographically by (mode 0, mode 1, ...) with duplicate coordinates summed (and a warning
// naming the source when there were any).
SparseTensor parse_tns(std::string_view text, const std::string& source, TnsInfo* info = nullptr);

SparseTensor read_tns(const std::string& path, TnsInfo* info = nullptr);

// The .tns text of `t`: with `header`, the order and dimension lines first (so dimensions larger
// than the largest index survive a round trip); values printed like %.17g.
std::string format_tns(const SparseTensor& t, bool header = true);

// Writes atomically; gzip-compressed when the name ends in ".gz".
void write_tns(const std::string& path, const SparseTensor& t, bool header = true);

}  // namespace sparsetune::io
