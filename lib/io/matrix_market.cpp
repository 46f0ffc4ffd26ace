#include "io/matrix_market.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <queue>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/convert.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "io/file_bytes.hpp"
#include "io/safetensors.hpp"
#include "io/text_scan.hpp"

namespace sparsetune::io {

using namespace detail;

std::string to_string(Field f) {
  switch (f) {
    case Field::real:
      return "real";
    case Field::integer:
      return "integer";
    case Field::pattern:
      return "pattern";
    case Field::complex:
      return "complex";
  }
  return "?";
}

std::string to_string(Symmetry s) {
  switch (s) {
    case Symmetry::general:
      return "general";
    case Symmetry::symmetric:
      return "symmetric";
    case Symmetry::skew_symmetric:
      return "skew-symmetric";
    case Symmetry::hermitian:
      return "hermitian";
  }
  return "?";
}

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ends_with_nocase(a, b);
}

std::string quoted(std::string_view s) {
  std::string t(s.substr(0, 40));
  return "'" + t + (s.size() > 40 ? "...'" : "'");
}

struct Header {
  MtxInfo info;
  std::int64_t size_line = 0;  // line number of the size line
  std::size_t data_pos = 0;    // offset of the first byte after it
};

Header parse_header(std::string_view text, const std::string& src) {
  Header h;
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

// One piece of the coordinate section, split at a line boundary and parsed on its own thread.
struct Chunk {
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

const char* next_line(const char* p, const char* end) {
  const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
  return nl ? static_cast<const char*>(nl) + 1 : end;
}

std::string number_error(NumStatus s, const char* what, const char* p, const char* end, int want) {
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
      return std::string(what) + " '" + token_text(p, end) + "' is not a number";
  }
}

template <Field F, bool Skew>
void parse_chunk(Chunk& c, std::int64_t rows, std::int64_t cols) {
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
    if (s != NumStatus::ok) return fail(number_error(s, "row index", p, end, want));
    p = skip_blanks(p, end);
    s = parse_int(p, end, j);
    if (s != NumStatus::ok) return fail(number_error(s, "column index", p, end, want));
    if constexpr (F != Field::pattern) {
      p = skip_blanks(p, end);
      if constexpr (F == Field::integer) {
        std::int64_t iv = 0;
        s = parse_int(p, end, iv);
        v = static_cast<double>(iv);
      } else {
        s = parse_real(p, end, v);
      }
      if (s != NumStatus::ok) return fail(number_error(s, "value", p, end, want));
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

// Local line number (1-based) of the n-th (0-based) entry line of a chunk.
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

// Runs task(k) for k in [0, tasks) on up to `threads` threads; rethrows the first exception.
template <class Fn>
void parallel_for(int tasks, int threads, Fn&& task) {
  threads = std::max(1, std::min(threads, tasks));
  if (threads == 1) {
    for (int k = 0; k < tasks; ++k) task(k);
    return;
  }
  std::atomic<int> next{0};
  std::exception_ptr error;
  std::atomic<bool> has_error{false};
  auto worker = [&] {
    for (int k; (k = next.fetch_add(1)) < tasks;) {
      try {
        task(k);
      } catch (...) {
        if (!has_error.exchange(true)) error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

int thread_count(int requested) {
  if (requested > 0) return requested;
  return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
}

// Parses one chunk with the parser specialised for the file's field and symmetry. The declared
// count sizes the buffers (`per_byte` entries per byte of text), but never beyond what the bytes
// could hold (an entry line has at least 4 bytes), so a forged size line cannot exhaust memory.
void parse_part(Chunk& c, const MtxInfo& info, double per_byte) {
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

// Checks the parsed chunks (in file order), reporting what a line-by-line reader would meet
// first: a surplus entry or a bad line.
template <class Parts>
void check_parts(const Parts& parts, const Header& h, const std::string& src) {
  const MtxInfo& info = h.info;
  const int chunks = static_cast<int>(parts.size());
  std::int64_t first_line = h.size_line + 1, entries = 0;
  for (int k = 0; k < chunks; ++k) {
    const Chunk& c = parts[k];
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
Coo64 assemble_coo(Parts& parts, const Header& h, int threads) {
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
    Chunk& c = parts[k];
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
    c = Chunk{};  // release the chunk's memory as soon as it is copied
  });
  return a;
}

// Builds the CSR straight from checked chunks (no intermediate COO): a counting pass, then a
// scatter in file order, so each row holds its entries in the order a COO would have had them;
// then rows are sorted and duplicates summed. Sets expanded_entries and duplicates.
template <class Parts>
Csr64 assemble_csr(Parts& parts, Header& h) {
  MtxInfo& info = h.info;
  const bool mirror = info.symmetry != Symmetry::general;
  const double sign = info.symmetry == Symmetry::skew_symmetric ? -1.0 : 1.0;
  Csr64 a;
  a.rows = info.rows;
  a.cols = info.cols;
  a.row_ptr.assign(static_cast<std::size_t>(info.rows) + 1, 0);
  auto& ptr = a.row_ptr;
  for (const Chunk& c : parts)
    for (std::size_t e = 0; e < c.row.size(); ++e) {
      ++ptr[c.row[e] + 1];
      if (mirror && c.row[e] != c.col[e]) ++ptr[c.col[e] + 1];
    }
  for (std::int64_t r = 0; r < a.rows; ++r) ptr[r + 1] += ptr[r];
  const std::int64_t total = ptr[a.rows];
  a.col_idx.resize(total);
  a.val.resize(total);
  // ptr[r] serves as row r's insertion cursor; afterwards it holds the start of row r + 1.
  for (Chunk& c : parts) {
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
    c = Chunk{};
  }
  for (std::int64_t r = a.rows; r > 0; --r) ptr[r] = ptr[r - 1];
  ptr[0] = 0;
  sparsetune::detail::sort_rows(a);
  info.duplicates = sparsetune::detail::merge_duplicates(a);
  info.expanded_entries = total;
  return a;
}

// The result a parse hands back: the expanded COO, or the summed CSR.
template <class Result, class Parts>
Result finish(Parts& parts, Header& h, const std::string& src, int threads) {
  check_parts(parts, h, src);
  if constexpr (std::is_same_v<Result, Coo64>) {
    Coo64 a = assemble_coo(parts, h, threads);
    h.info.expanded_entries = a.nnz();
    return a;
  } else {
    return assemble_csr(parts, h);
  }
}

template <class Result>
Result from_coo(Coo64&& c, Header& h) {
  h.info.expanded_entries = c.nnz();
  if constexpr (std::is_same_v<Result, Coo64>) {
    return std::move(c);
  } else {
    return coo_to_csr<std::int64_t, std::int64_t>(c, &h.info.duplicates);
  }
}

template <class Result>
Result parse_coordinate(std::string_view text, const std::string& src, Header& h,
                        const MtxParseOptions& opt) {
  const char* const data = text.data() + h.data_pos;
  const char* const data_end = text.data() + text.size();
  const std::size_t len = static_cast<std::size_t>(data_end - data);
  const int threads = thread_count(opt.threads);
  const std::size_t min_chunk = std::max<std::size_t>(opt.min_chunk_bytes, 1);
  const int chunks = static_cast<int>(
      std::clamp<std::size_t>(len / min_chunk, 1, static_cast<std::size_t>(4 * threads)));

  std::vector<Chunk> parts(chunks);
  const char* p = data;
  for (int k = 0; k < chunks; ++k) {
    parts[k].begin = p;
    const char* target = data + len * (k + 1) / chunks;
    p = k + 1 == chunks ? data_end : (target <= p ? p : next_line(target - 1, data_end));
    parts[k].end = p;
  }
  const double per_byte = len ? static_cast<double>(h.info.stored_entries) / len : 0.0;
  parallel_for(chunks, threads, [&](int k) { parse_part(parts[k], h.info, per_byte); });
  return finish<Result>(parts, h, src, threads);
}

// Finds the end of the size line in a text that grows by appending, resuming where the previous
// call stopped so that a long header (or a long line without a newline) is scanned only once.
struct SizeLineFinder {
  std::size_t pos = 0;       // start of the first line not yet examined
  std::size_t searched = 0;  // no newline in [pos, searched)
  bool banner = false;

  // Offset just past the size line once `text` holds it complete (newline included), else npos.
  std::size_t feed(std::string_view text) {
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
};

template <class Result>
Result parse_text(std::string_view text, const std::string& src, MtxInfo* info,
                  const MtxParseOptions& opt);

template <class Result>
Result parse_gzip(std::string_view compressed, const std::string& src, MtxInfo* info,
                  const MtxParseOptions& opt) {
  GunzipStream z(compressed, src);
  std::string head;
  SizeLineFinder finder;
  std::size_t data_pos = std::string_view::npos;
  while (data_pos == std::string_view::npos && !z.done()) {
    const std::size_t old = head.size();
    const std::size_t want = std::max<std::size_t>(1 << 16, old);  // geometric growth
    head.resize(old + want);
    head.resize(old + z.read(head.data() + old, want));
    data_pos = finder.feed(head);
  }
  if (data_pos == std::string_view::npos || !parse_header(head, src).info.coordinate) {
    // No complete header before the end, or a dense array: parse the whole text in one piece.
    std::string text = std::move(head);
    while (!z.done()) {
      const std::size_t old = text.size();
      const std::size_t want = std::max<std::size_t>(1 << 20, old);
      text.resize(old + want);
      text.resize(old + z.read(text.data() + old, want));
    }
    return parse_text<Result>(text, src, info, opt);
  }
  Header h = parse_header(head, src);

  const int threads = thread_count(opt.threads);
  const std::size_t block = std::max<std::size_t>(opt.min_chunk_bytes, 1) * 4;
  const double per_byte = static_cast<double>(h.info.stored_entries) / z.size_hint();
  std::deque<Chunk> parts;  // stable addresses: workers hold pointers while this thread appends
  std::vector<std::shared_ptr<std::string>> texts;
  std::queue<Chunk*> queue;
  std::mutex m;
  std::condition_variable cv;
  bool finished = false;
  std::exception_ptr error;

  auto work = [&] {
    for (;;) {
      Chunk* c = nullptr;
      {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return finished || !queue.empty(); });
        if (queue.empty()) return;
        c = queue.front();
        queue.pop();
      }
      try {
        parse_part(*c, h.info, per_byte);
      } catch (...) {
        std::lock_guard lock(m);
        if (!error) error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  auto stop = [&] {
    {
      std::lock_guard lock(m);
      finished = true;
    }
    cv.notify_all();
    work();  // this thread helps with what is left
    for (auto& t : pool) t.join();
    pool.clear();
  };
  try {
    for (int t = 1; t < threads; ++t) pool.emplace_back(work);
    std::string carry = head.substr(data_pos);
    std::string().swap(head);
    while (!carry.empty() || !z.done()) {
      auto text = std::make_shared<std::string>(std::move(carry));
      carry.clear();
      // Fill a block, and keep going until it ends on a newline (or the data ends).
      std::size_t cut = std::string::npos;
      while (!z.done()) {
        const std::size_t old = text->size();
        const std::size_t want = std::max(block, old / 2);
        text->resize(old + want);
        text->resize(old + z.read(text->data() + old, want));
        if (text->size() >= block && (cut = text->rfind('\n')) != std::string::npos) break;
      }
      if (!z.done() && cut != std::string::npos) {
        carry.assign(*text, cut + 1);
        text->resize(cut + 1);
      }
      texts.push_back(text);
      {
        std::lock_guard lock(m);
        Chunk& c = parts.emplace_back();
        c.begin = text->data();
        c.end = text->data() + text->size();
        queue.push(&c);
      }
      cv.notify_one();
    }
  } catch (...) {
    stop();
    throw;
  }
  stop();
  if (error) std::rethrow_exception(error);
  Result a = finish<Result>(parts, h, src, threads);
  if (info) *info = h.info;
  return a;
}

Coo64 parse_array(std::string_view text, const std::string& src, const Header& h) {
  const MtxInfo& info = h.info;
  const std::int64_t expected = info.stored_entries;
  const bool mirror = info.symmetry != Symmetry::general;
  const double sign = info.symmetry == Symmetry::skew_symmetric ? -1.0 : 1.0;
  Coo64 a;
  a.rows = info.rows;
  a.cols = info.cols;
  const auto cap = static_cast<std::size_t>(
      std::min<std::int64_t>(expected, static_cast<std::int64_t>(text.size() / 2 + 1)));
  a.row.reserve(cap);
  a.col.reserve(cap);
  a.val.reserve(cap);
  // Column-major order; symmetric files hold the lower triangle, skew-symmetric files the
  // strictly lower one.
  std::int64_t i = info.symmetry == Symmetry::skew_symmetric ? 1 : 0, j = 0, count = 0;
  LineCursor cur{text, h.data_pos, h.size_line};
  std::string_view line;
  while (cur.next(line)) {
    const char c = first_char(line);
    if (c == '\0' || c == '%') continue;
    if (count == expected)
      throw InputError(src, cur.line,
                       "more entries than the " + std::to_string(expected) +
                           " the size line on line " + std::to_string(h.size_line) + " implies");
    const char* p = skip_blanks(line.data(), line.data() + line.size());
    const char* end = line.data() + line.size();
    double v = 0;
    NumStatus s;
    if (info.field == Field::integer) {
      std::int64_t iv = 0;
      s = parse_int(p, end, iv);
      v = static_cast<double>(iv);
    } else {
      s = parse_real(p, end, v);
    }
    if (s != NumStatus::ok) throw InputError(src, cur.line, number_error(s, "value", p, end, 1));
    if (skip_blanks(p, end) != end)
      throw InputError(src, cur.line,
                       "the array format has one value per line, found more ('" +
                           token_text(skip_blanks(p, end), end) + "')");
    a.row.push_back(i);
    a.col.push_back(j);
    a.val.push_back(v);
    if (mirror && i != j) {
      a.row.push_back(j);
      a.col.push_back(i);
      a.val.push_back(sign * v);
    }
    ++count;
    if (++i == info.rows) {
      ++j;
      i = info.symmetry == Symmetry::general          ? 0
          : info.symmetry == Symmetry::skew_symmetric ? j + 1
                                                      : j;
    }
  }
  if (count < expected)
    throw InputError(src, h.size_line,
                     "the size line implies " + std::to_string(expected) +
                         " entries but the file has only " + std::to_string(count));
  return a;
}

template <class Result>
Result parse_text(std::string_view text, const std::string& src, MtxInfo* info,
                  const MtxParseOptions& opt) {
  Header h = parse_header(text, src);
  Result a = h.info.coordinate ? parse_coordinate<Result>(text, src, h, opt)
                               : from_coo<Result>(parse_array(text, src, h), h);
  if (info) *info = h.info;
  return a;
}

template <class Result>
Result parse_bytes(std::string_view bytes, const std::string& src, MtxInfo* info,
                   const MtxParseOptions& opt) {
  if (is_gzip(bytes)) return parse_gzip<Result>(bytes, src, info, opt);
  if (looks_like_safetensors(bytes))
    throw InputError(src, 0, "this is a safetensors container, not a Matrix Market file");
  return parse_text<Result>(bytes, src, info, opt);
}

}  // namespace

Coo64 parse_matrix_market(std::string_view text, const std::string& source, MtxInfo* info,
                          const MtxParseOptions& options) {
  return parse_text<Coo64>(text, source, info, options);
}

Coo64 parse_matrix_market_bytes(std::string_view bytes, const std::string& source, MtxInfo* info,
                                const MtxParseOptions& options) {
  return parse_bytes<Coo64>(bytes, source, info, options);
}

Csr64 parse_matrix_market_csr(std::string_view bytes, const std::string& source, MtxInfo* info,
                              const MtxParseOptions& options) {
  return parse_bytes<Csr64>(bytes, source, info, options);
}

Coo64 read_matrix_market(const std::string& path, MtxInfo* info) {
  return parse_matrix_market_bytes(read_file(path), path, info);
}

std::string format_matrix_market(const Csr64& a) {
  std::string out = "%%MatrixMarket matrix coordinate real general\n% written by sparsetune ";
  out += kVersion;
  out += '\n';
  out +=
      std::to_string(a.rows) + " " + std::to_string(a.cols) + " " + std::to_string(a.nnz()) + "\n";
  out.reserve(out.size() + static_cast<std::size_t>(a.nnz()) * 48);
  char buf[96];
  for (std::int64_t r = 0; r < a.rows; ++r) {
    for (std::int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
      const double v = a.val[k];
      if (!std::isfinite(v))
        throw Error("cannot write a non-finite value (row " + std::to_string(r + 1) + ", column " +
                    std::to_string(a.col_idx[k] + 1) + ") to Matrix Market");
      char* p = std::to_chars(buf, buf + 32, r + 1).ptr;
      *p++ = ' ';
      p = std::to_chars(p, p + 32, a.col_idx[k] + 1).ptr;
      *p++ = ' ';
      p = std::to_chars(p, buf + sizeof(buf) - 1, v, std::chars_format::general, 17).ptr;
      *p++ = '\n';
      out.append(buf, p);
    }
  }
  return out;
}

void write_matrix_market(const std::string& path, const Csr64& a) {
  std::string text = format_matrix_market(a);
  if (ends_with_nocase(path, ".gz")) text = gzip(text);
  write_file_atomic(path, text);
}

}  // namespace sparsetune::io
