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
#include "io/mtx_chunks.hpp"
#include "io/mtx_header.hpp"
#include "io/parallel_for.hpp"
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

// The result a parse hands back: the expanded COO, or the summed CSR.
template <class Result, class Parts>
Result finish(Parts& parts, MtxHeader& h, const std::string& src, int threads) {
  check_parts(parts, h, src);
  if constexpr (std::is_same_v<Result, Coo64>) {
    Coo64 a = assemble_coo(parts, h, threads);
    h.info.expanded_entries = a.nnz();
    return a;
  } else {
    check_csr_memory(h, src);
    return assemble_csr(parts, h);
  }
}

template <class Result>
Result from_coo(Coo64&& c, MtxHeader& h, const std::string& src) {
  h.info.expanded_entries = c.nnz();
  if constexpr (std::is_same_v<Result, Coo64>) {
    return std::move(c);
  } else {
    check_csr_memory(h, src);
    return coo_to_csr<std::int64_t, std::int64_t>(c, &h.info.duplicates);
  }
}

template <class Result>
Result parse_coordinate(std::string_view text, const std::string& src, MtxHeader& h,
                        const MtxParseOptions& opt) {
  const char* const data = text.data() + h.data_pos;
  const char* const data_end = text.data() + text.size();
  const std::size_t len = static_cast<std::size_t>(data_end - data);
  const int threads = thread_count(opt.threads);
  const std::size_t min_chunk = std::max<std::size_t>(opt.min_chunk_bytes, 1);
  const int chunks = static_cast<int>(
      std::clamp<std::size_t>(len / min_chunk, 1, static_cast<std::size_t>(4 * threads)));

  std::vector<MtxChunk> parts(chunks);
  const char* p = data;
  for (int k = 0; k < chunks; ++k) {
    parts[k].begin = p;
    const char* target = data + len * (k + 1) / chunks;
    p = k + 1 == chunks ? data_end : (target <= p ? p : next_line(target - 1, data_end));
    parts[k].end = p;
  }
  const double per_byte = len ? static_cast<double>(h.info.stored_entries) / len : 0.0;
  parallel_for(chunks, threads, [&](int k) { parse_mtx_chunk(parts[k], h.info, per_byte); });
  return finish<Result>(parts, h, src, threads);
}

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
  if (data_pos == std::string_view::npos || !parse_mtx_header(head, src).info.coordinate) {
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
  MtxHeader h = parse_mtx_header(head, src);

  const int threads = thread_count(opt.threads);
  const std::size_t block = std::max<std::size_t>(opt.min_chunk_bytes, 1) * 4;
  const double per_byte = static_cast<double>(h.info.stored_entries) / z.size_hint();
  std::deque<MtxChunk> parts;  // stable addresses: workers hold pointers while this thread appends
  std::vector<std::shared_ptr<std::string>> texts;
  std::queue<MtxChunk*> queue;
  std::mutex m;
  std::condition_variable cv;
  bool finished = false;
  std::exception_ptr error;

  auto work = [&] {
    for (;;) {
      MtxChunk* c = nullptr;
      {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return finished || !queue.empty(); });
        if (queue.empty()) return;
        c = queue.front();
        queue.pop();
      }
      try {
        parse_mtx_chunk(*c, h.info, per_byte);
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
        MtxChunk& c = parts.emplace_back();
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

Coo64 parse_array(std::string_view text, const std::string& src, const MtxHeader& h) {
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
    if (s != NumStatus::ok) throw InputError(src, cur.line, number_error(s, "value", p, end, 1, info.field == Field::integer));
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
  MtxHeader h = parse_mtx_header(text, src);
  Result a = h.info.coordinate ? parse_coordinate<Result>(text, src, h, opt)
                               : from_coo<Result>(parse_array(text, src, h), h, src);
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
