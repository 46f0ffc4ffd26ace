#pragma once
// Tokenising helpers shared by the text readers. A line is split on spaces, tabs and '\r' (so CRLF
// files read like LF files); numbers are parsed with from_chars, which neither allocates nor
// depends on the locale.
#include <fast_float/fast_float.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

namespace sparsetune::io::detail {

inline bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

inline const char* skip_blanks(const char* p, const char* end) {
  while (p < end && is_blank(*p)) ++p;
  return p;
}

// End of the token starting at p: the next blank, newline or end of text.
inline const char* token_end(const char* p, const char* end) {
  while (p < end && !is_blank(*p) && *p != '\n') ++p;
  return p;
}

// The token at p, shortened for error messages.
// Control bytes are written as \xNN: a NUL would end the message where it is printed.
inline std::string token_text(const char* p, const char* end) {
  const char* e = token_end(p, end);
  std::string t;
  for (const char* q = p; q < e && q < p + 40; ++q) {
    const auto c = static_cast<unsigned char>(*q);
    if (c < 0x20 || c == 0x7f) {
      static const char hex[] = "0123456789abcdef";
      t += "\\x";
      t += hex[c >> 4];
      t += hex[c & 15];
    } else {
      t += static_cast<char>(c);
    }
  }
  if (e - p > 40) t += "...";
  return t;
}

enum class NumStatus { ok, missing, invalid, overflow, not_finite };

// Parses a whole token as int64 (an optional leading '+' is accepted); advances p past it on
// success only, so that error messages can quote the token.
inline NumStatus parse_int(const char*& p, const char* end, std::int64_t& out) {
  if (p >= end || *p == '\n') return NumStatus::missing;
  const char* q = p;
  if (*q == '+' && q + 1 < end && *(q + 1) != '-') ++q;
  auto r = std::from_chars(q, end, out);
  if (r.ec == std::errc::result_out_of_range) return NumStatus::overflow;
  if (r.ec != std::errc() || (r.ptr < end && !is_blank(*r.ptr) && *r.ptr != '\n'))
    return NumStatus::invalid;
  p = r.ptr;
  return NumStatus::ok;
}

// Parses a whole token as a finite double; advances p past it on success only.
inline NumStatus parse_real(const char*& p, const char* end, double& out) {
  if (p >= end || *p == '\n') return NumStatus::missing;
  const char* q = p;
  if (*q == '+' && q + 1 < end && *(q + 1) != '-' && *(q + 1) != '+') ++q;
  auto r = fast_float::from_chars(q, end, out);
  if (r.ec != std::errc() || (r.ptr < end && !is_blank(*r.ptr) && *r.ptr != '\n'))
    return NumStatus::invalid;
  if (!std::isfinite(out)) return NumStatus::not_finite;  // p stays on the token for messages
  p = r.ptr;
  return NumStatus::ok;
}

// Splits one line (no '\n') into blank-separated tokens.
inline int split_tokens(std::string_view line, std::string_view* out, int max_out) {
  int n = 0;
  const char* p = line.data();
  const char* end = p + line.size();
  for (;;) {
    p = skip_blanks(p, end);
    if (p >= end) break;
    const char* e = token_end(p, end);
    if (n < max_out) out[n] = std::string_view(p, static_cast<std::size_t>(e - p));
    ++n;
    p = e;
  }
  return n;
}

// Cursor over the lines of a text, with 1-based line numbers.
struct LineCursor {
  std::string_view text;
  std::size_t pos = 0;
  std::int64_t line = 0;  // number of the line last returned

  bool next(std::string_view& out) {
    if (pos >= text.size()) return false;
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    out = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line;
    return true;
  }
};

// True when a line holds only blanks.
inline bool is_blank_line(std::string_view line) {
  for (char c : line)
    if (!is_blank(c)) return false;
  return true;
}

// The first non-blank character of a line, or '\0'.
inline char first_char(std::string_view line) {
  for (char c : line)
    if (!is_blank(c)) return c;
  return '\0';
}

}  // namespace sparsetune::io::detail
