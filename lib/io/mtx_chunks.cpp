#include "io/mtx_chunks.hpp"

#include <algorithm>

#include "io/text_scan.hpp"

namespace sparsetune::io::detail {

std::string number_error(NumStatus s, const char* what, const char* p, const char* end, int want,
                         bool integer) {
  switch (s) {
    case NumStatus::missing:
      return "expected " + std::to_string(want) +
             (want == 2 ? " values (row column)" : " values (row column value)") +
             ", the line ends before the " + what;
    case NumStatus::overflow:
      return std::string(what) + " '" + token_text(p, end) + "' overflows int64";
    case NumStatus::not_finite:
      return std::string(what) + " '" + token_text(p, end) + "' is not finite (NaN or Inf)";
    default:
      return std::string(what) + " '" + token_text(p, end) + "' is not " +
             (integer ? "an integer" : "a number");
  }
}

namespace {
template <Field F, bool Skew>
void parse_chunk(MtxChunk& c, std::int64_t rows, std::int64_t cols) {
  constexpr int want = F == Field::pattern ? 2 : 3;
  const char* p = c.begin;
  const char* const end = c.end;
  auto fail = [&](std::string msg) {
    c.failed = true;
    c.err_line = c.lines + 1;
    c.err = std::move(msg);
  };
  while (p < end) {
    p = skip_blanks(p, end);
    if (p >= end) break;
    if (*p == '\n') {
      ++p;
      ++c.lines;
      continue;
    }
    if (*p == '%') {
      p = next_line(p, end);
      ++c.lines;
      continue;
    }
    std::int64_t i = 0, j = 0;
    double v = 1.0;
    NumStatus s = parse_int(p, end, i);
    if (s != NumStatus::ok) return fail(number_error(s, "row index", p, end, want, true));
    p = skip_blanks(p, end);
    s = parse_int(p, end, j);
    if (s != NumStatus::ok) return fail(number_error(s, "column index", p, end, want, true));
    if constexpr (F != Field::pattern) {
      p = skip_blanks(p, end);
      if constexpr (F == Field::integer) {
        std::int64_t iv = 0;
        s = parse_int(p, end, iv);
        v = static_cast<double>(iv);
      } else {
        s = parse_real(p, end, v);
      }
      if (s != NumStatus::ok) return fail(number_error(s, "value", p, end, want, F == Field::integer));
    }
    p = skip_blanks(p, end);
    if (p < end && *p != '\n')
      return fail("expected " + std::to_string(want) + " values on the line, found more ('" +
                  token_text(p, end) + "')");
    if (i < 1) return fail("row index " + std::to_string(i) + " is below 1");
    if (i > rows)
      return fail("row index " + std::to_string(i) + " exceeds the " + std::to_string(rows) +
                  " rows");
    if (j < 1) return fail("column index " + std::to_string(j) + " is below 1");
    if (j > cols)
      return fail("column index " + std::to_string(j) + " exceeds the " + std::to_string(cols) +
                  " columns");
    if constexpr (Skew)
      if (i == j && v != 0.0)
        return fail("diagonal entry (" + std::to_string(i) + ", " + std::to_string(j) +
                    ") of a skew-symmetric matrix must be zero");
    c.row.push_back(i - 1);
    c.col.push_back(j - 1);
    c.val.push_back(v);
    c.offdiag += i != j;
    if (p < end) {
      ++p;
      ++c.lines;
    }
  }
}

}  // namespace

std::int64_t nth_entry_line(const char* p, const char* end, std::int64_t n) {
  std::int64_t line = 1;
  while (p < end) {
    const char* q = skip_blanks(p, end);
    const bool entry = q < end && *q != '\n' && *q != '%';
    if (entry && n-- == 0) return line;
    p = next_line(q, end);
    ++line;
  }
  return line;
}

// The declared count sizes the buffers, but never beyond what the bytes could hold (an entry
// line has at least 4 bytes), so a forged size line cannot exhaust memory.
void parse_mtx_chunk(MtxChunk& c, const MtxInfo& info, double per_byte) {
  const auto bytes = static_cast<std::size_t>(c.end - c.begin);
  const auto reserve = static_cast<std::size_t>(
      std::min<double>(per_byte * bytes * 1.02 + 16, static_cast<double>(bytes / 4 + 1)));
  c.row.reserve(reserve);
  c.col.reserve(reserve);
  if (info.field != Field::pattern) c.val.reserve(reserve);
  const bool skew = info.symmetry == Symmetry::skew_symmetric;
  switch (info.field) {
    case Field::pattern:
      parse_chunk<Field::pattern, false>(c, info.rows, info.cols);
      break;
    case Field::integer:
      skew ? parse_chunk<Field::integer, true>(c, info.rows, info.cols)
           : parse_chunk<Field::integer, false>(c, info.rows, info.cols);
      break;
    default:
      skew ? parse_chunk<Field::real, true>(c, info.rows, info.cols)
           : parse_chunk<Field::real, false>(c, info.rows, info.cols);
  }
}

}  // namespace sparsetune::io::detail
