#include "io/mtx_header.hpp"

#include <algorithm>
#include <limits>

#include "core/error.hpp"
#include "core/memory.hpp"
#include "io/file_bytes.hpp"
#include "io/text_scan.hpp"

namespace sparsetune::io::detail {

namespace {
bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ends_with_nocase(a, b);
}

std::string quoted(std::string_view s) {
  std::string t(s.substr(0, 40));
  return "'" + t + (s.size() > 40 ? "...'" : "'");
}

}  // namespace

MtxHeader parse_mtx_header(std::string_view text, const std::string& src) {
  MtxHeader h;
  LineCursor cur{text};
  std::string_view line;
  if (!cur.next(line)) throw InputError(src, 1, "empty file: expected a %%MatrixMarket banner");
  if (line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // UTF-8 byte order mark
  std::string_view tok[6];
  const int n = split_tokens(line, tok, 6);
  if (n == 0 || !iequals(tok[0], "%%MatrixMarket"))
    throw InputError(src, 1,
                     "not a Matrix Market file: the first line must start with "
                     "%%MatrixMarket");
  if (n != 5)
    throw InputError(src, 1,
                     "bad banner: expected '%%MatrixMarket matrix <format> <field> <symmetry>'");
  if (!iequals(tok[1], "matrix"))
    throw InputError(src, 1, "unsupported object " + quoted(tok[1]) + " (only 'matrix')");
  MtxInfo& info = h.info;
  if (iequals(tok[2], "coordinate"))
    info.coordinate = true;
  else if (iequals(tok[2], "array"))
    info.coordinate = false;
  else
    throw InputError(src, 1,
                     "unknown format " + quoted(tok[2]) + " (expected coordinate or array)");
  if (iequals(tok[3], "real") || iequals(tok[3], "double"))
    info.field = Field::real;
  else if (iequals(tok[3], "integer"))
    info.field = Field::integer;
  else if (iequals(tok[3], "pattern"))
    info.field = Field::pattern;
  else if (iequals(tok[3], "complex"))
    info.field = Field::complex;
  else
    throw InputError(src, 1,
                     "unknown field " + quoted(tok[3]) +
                         " (expected real, double, integer, pattern or complex)");
  if (iequals(tok[4], "general"))
    info.symmetry = Symmetry::general;
  else if (iequals(tok[4], "symmetric"))
    info.symmetry = Symmetry::symmetric;
  else if (iequals(tok[4], "skew-symmetric"))
    info.symmetry = Symmetry::skew_symmetric;
  else if (iequals(tok[4], "hermitian"))
    info.symmetry = Symmetry::hermitian;
  else
    throw InputError(src, 1,
                     "unknown symmetry " + quoted(tok[4]) +
                         " (expected general, symmetric, skew-symmetric or hermitian)");
  if (info.field == Field::complex) throw InputError(src, 1, "complex matrices are not supported");
  if (!info.coordinate && info.field == Field::pattern)
    throw InputError(src, 1, "the array format cannot have the pattern field");
  if (info.field == Field::pattern && info.symmetry == Symmetry::skew_symmetric)
    throw InputError(src, 1, "a pattern matrix cannot be skew-symmetric (it has no signs)");

  bool found = false;
  while (cur.next(line)) {
    const char c = first_char(line);
    if (c == '\0' || c == '%') continue;
    found = true;
    break;
  }
  if (!found) throw InputError(src, cur.line + 1, "missing size line");
  h.size_line = cur.line;
  h.data_pos = std::min(cur.pos, text.size());

  const int want = info.coordinate ? 3 : 2;
  const char* what = info.coordinate ? "size line must be 'rows columns entries'"
                                     : "size line must be 'rows columns'";
  const int got = split_tokens(line, tok, 6);
  if (got != want) throw InputError(src, h.size_line, std::string(what));
  std::int64_t v[3] = {0, 0, 0};
  static const char* names[3] = {"row count", "column count", "entry count"};
  for (int k = 0; k < want; ++k) {
    const char* p = tok[k].data();
    const char* e = p + tok[k].size();
    switch (parse_int(p, e, v[k])) {
      case NumStatus::ok:
        break;
      case NumStatus::overflow:
        throw InputError(src, h.size_line,
                         std::string(names[k]) + " " + quoted(tok[k]) + " overflows int64");
      default:
        throw InputError(src, h.size_line,
                         std::string(names[k]) + " " + quoted(tok[k]) + " is not an integer");
    }
    if (v[k] < 0)
      throw InputError(src, h.size_line,
                       std::string(names[k]) + " is negative (" + std::to_string(v[k]) + ")");
  }
  info.rows = v[0];
  info.cols = v[1];
  if (info.symmetry != Symmetry::general && info.rows != info.cols)
    throw InputError(src, h.size_line,
                     "a " + to_string(info.symmetry) + " matrix must be square, not " +
                         std::to_string(info.rows) + " x " + std::to_string(info.cols));
  if (info.coordinate) {
    info.stored_entries = v[2];
  } else {
    // n*cols, n(n+1)/2 or n(n-1)/2 values, halving the even factor first to avoid overflow.
    const std::int64_t n = info.rows;
    std::int64_t a = n, b = info.cols;
    if (info.symmetry != Symmetry::general) {
      b = info.symmetry == Symmetry::skew_symmetric ? std::max<std::int64_t>(n - 1, 0) : n + 1;
      (a % 2 == 0 ? a : b) /= 2;
    }
    std::int64_t count = 0;
    if (n == std::numeric_limits<std::int64_t>::max() || __builtin_mul_overflow(a, b, &count))
      throw InputError(src, h.size_line, "the dense array has more than 2^63 entries");
    info.stored_entries = count;
  }
  return h;
}

void check_csr_memory(const MtxHeader& h, const std::string& src) {
  const MtxInfo& i = h.info;
  const double entries =
      static_cast<double>(i.stored_entries) * (i.symmetry == Symmetry::general ? 1.0 : 2.0);
  const double need = 16.0 * (static_cast<double>(i.rows) + 1.0) + 16.0 * entries;
  try {
    check_memory_need(need, "the CSR of a " + std::to_string(i.rows) + " x " +
                                std::to_string(i.cols) + " matrix with " +
                                std::to_string(i.stored_entries) + " entries");
  } catch (const InputError&) {
    throw;
  } catch (const Error& e) {
    throw InputError(src, h.size_line, e.what());
  }
}

std::size_t SizeLineFinder::feed(std::string_view text) {
  for (;;) {
    const std::size_t nl = text.find('\n', std::max(pos, searched));
    if (nl == std::string_view::npos) {
      searched = text.size();
      return std::string_view::npos;
    }
    const std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (!banner) {
      banner = true;
      continue;
    }
    const char c = first_char(line);
    if (c != '\0' && c != '%') return pos;
  }
}

}  // namespace sparsetune::io::detail
