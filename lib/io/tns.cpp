#include "io/tns.hpp"

#include <spdlog/spdlog.h>

#include <charconv>
#include <cmath>

#include "core/error.hpp"
#include "io/file_bytes.hpp"
#include "io/safetensors.hpp"
#include "io/text_scan.hpp"

namespace sparsetune::io {

using namespace detail;

namespace {

bool is_content(std::string_view line) {
  const char c = first_char(line);
  return c != '\0' && c != '#';
}

int count_tokens(std::string_view line) { return split_tokens(line, nullptr, 0); }

// Reads `n` positive integers (a header line) into `out`.
void parse_header_ints(std::string_view line, int n, std::vector<std::int64_t>& out,
                       const std::string& src, std::int64_t lineno, const char* what) {
  const char* p = line.data();
  const char* end = p + line.size();
  for (int k = 0; k < n; ++k) {
    p = skip_blanks(p, end);
    std::int64_t v = 0;
    const char* tok = p;
    switch (parse_int(p, end, v)) {
      case NumStatus::ok:
        break;
      case NumStatus::overflow:
        throw InputError(src, lineno,
                         std::string(what) + " '" + token_text(tok, end) + "' overflows int64");
      default:
        throw InputError(src, lineno,
                         std::string(what) + " '" + token_text(tok, end) + "' is not an integer");
    }
    if (v < 1)
      throw InputError(src, lineno, std::string(what) + " " + std::to_string(v) + " is below 1");
    out.push_back(v);
  }
}

void check_order(std::int64_t order, const std::string& src, std::int64_t lineno) {
  if (order < 3)
    throw InputError(src, lineno,
                     "order-" + std::to_string(order) +
                         " tensor: only orders of 3 or more are supported (a matrix belongs in a "
                         ".mtx file)");
  if (order > kMaxTensorOrder)
    throw InputError(src, lineno,
                     "order " + std::to_string(order) + " exceeds the supported maximum of " +
                         std::to_string(kMaxTensorOrder));
}

}  // namespace

SparseTensor parse_tns(std::string_view text, const std::string& source, TnsInfo* info) {
  LineCursor cur{text};
  std::string_view line;
  bool have = false;
  while ((have = cur.next(line)) && !is_content(line)) {
  }
  if (!have) throw InputError(source, cur.line, "no entries: the file holds no tensor data");

  SparseTensor t;
  TnsInfo ti;
  int order = 0;
  const int first_tokens = count_tokens(line);
  if (first_tokens == 1) {
    // ParTI-style header: the order alone on a line, then the dimensions.
    std::vector<std::int64_t> v;
    parse_header_ints(line, 1, v, source, cur.line, "order");
    if (v[0] > kMaxTensorOrder) check_order(v[0], source, cur.line);  // before any allocation
    order = static_cast<int>(v[0]);
    check_order(order, source, cur.line);
    const std::int64_t order_line = cur.line;
    while ((have = cur.next(line)) && !is_content(line)) {
    }
    if (!have)
      throw InputError(source, order_line,
                       "a header line with the order must be followed by the dimensions");
    const int n = count_tokens(line);
    if (n != order)
      throw InputError(source, cur.line,
                       "the header gives order " + std::to_string(order) + " but this line has " +
                           std::to_string(n) + " dimensions");
    parse_header_ints(line, order, t.dims, source, cur.line, "dimension");
    ti.header = true;
    have = false;  // the dimension line is consumed; data starts on the next line
  } else {
    order = first_tokens - 1;
    check_order(order, source, cur.line);
    t.dims.assign(order, 0);
  }

  t.idx.assign(order, {});
  const auto guess = static_cast<std::size_t>(text.size() / (2 * (order + 1) + 8));
  for (auto& column : t.idx) column.reserve(guess);
  t.val.reserve(guess);
  std::vector<std::int64_t> coord(order);
  // `have` says whether `line` already holds the first data line.
  while (have || cur.next(line)) {
    have = false;
    if (!is_content(line)) continue;
    const char* p = line.data();
    const char* end = p + line.size();
    auto wrong_count = [&] {
      throw InputError(source, cur.line,
                       "expected " + std::to_string(order + 1) + " values (" +
                           std::to_string(order) + " indices and a value), found " +
                           std::to_string(count_tokens(line)));
    };
    for (int m = 0; m < order; ++m) {
      p = skip_blanks(p, end);
      const char* tok = p;
      std::int64_t i = 0;
      switch (parse_int(p, end, i)) {
        case NumStatus::ok:
          break;
        case NumStatus::missing:
          wrong_count();
          break;
        case NumStatus::overflow:
          throw InputError(source, cur.line,
                           "index '" + token_text(tok, end) + "' of mode " + std::to_string(m + 1) +
                               " overflows int64");
        default:
          throw InputError(source, cur.line,
                           "index '" + token_text(tok, end) + "' of mode " + std::to_string(m + 1) +
                               " is not an integer");
      }
      if (i < 1)
        throw InputError(
            source, cur.line,
            "index " + std::to_string(i) + " of mode " + std::to_string(m + 1) + " is below 1");
      if (ti.header && i > t.dims[m])
        throw InputError(source, cur.line,
                         "index " + std::to_string(i) + " of mode " + std::to_string(m + 1) +
                             " exceeds the declared dimension " + std::to_string(t.dims[m]));
      coord[m] = i - 1;
    }
    p = skip_blanks(p, end);
    const char* tok = p;
    double v = 0;
    switch (parse_real(p, end, v)) {
      case NumStatus::ok:
        break;
      case NumStatus::missing:
        wrong_count();
        break;
      case NumStatus::not_finite:
        throw InputError(source, cur.line,
                         "value '" + token_text(tok, end) + "' is not finite (NaN or Inf)");
      default:
        throw InputError(source, cur.line, "value '" + token_text(tok, end) + "' is not a number");
    }
    if (skip_blanks(p, end) != end) wrong_count();
    for (int m = 0; m < order; ++m) {
      t.idx[m].push_back(coord[m]);
      if (!ti.header) t.dims[m] = std::max(t.dims[m], coord[m] + 1);
    }
    t.val.push_back(v);
  }
  ti.stored_entries = t.nnz();

  ti.duplicates = sort_and_merge(t);
  if (ti.duplicates > 0)
    spdlog::warn("{}: {} duplicate entries were summed", source, ti.duplicates);
  if (info) *info = ti;
  return t;
}

SparseTensor read_tns(const std::string& path, TnsInfo* info) {
  const std::string bytes = read_file_decompressed(path);
  if (looks_like_safetensors(bytes))
    throw InputError(path, 0, "this is a safetensors container, not a .tns file");
  return parse_tns(bytes, path, info);
}

std::string format_tns(const SparseTensor& t, bool header) {
  std::string out;
  if (header) {
    out.append(std::to_string(t.order())).append("\n");
    for (int m = 0; m < t.order(); ++m) out.append(m ? " " : "").append(std::to_string(t.dims[m]));
    out.append("\n");
  }
  char buf[64];
  for (std::int64_t k = 0; k < t.nnz(); ++k) {
    for (int m = 0; m < t.order(); ++m) {
      char* p = std::to_chars(buf, buf + sizeof(buf), t.idx[m][k] + 1).ptr;
      *p++ = ' ';
      out.append(buf, p);
    }
    if (!std::isfinite(t.val[k]))
      throw Error("cannot write a non-finite value (entry " + std::to_string(k) + ") to .tns");
    char* p =
        std::to_chars(buf, buf + sizeof(buf) - 1, t.val[k], std::chars_format::general, 17).ptr;
    *p++ = '\n';
    out.append(buf, p);
  }
  return out;
}

void write_tns(const std::string& path, const SparseTensor& t, bool header) {
  if (t.order() < 3) throw Error(path + ": only tensors of order 3 or more can be written");
  std::string text = format_tns(t, header);
  if (ends_with_nocase(path, ".gz")) text = gzip(text);
  write_file_atomic(path, text);
}

}  // namespace sparsetune::io
