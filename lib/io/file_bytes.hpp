#pragma once
// Whole-file reads (gzip detected by its magic bytes, not by the name) and atomic writes: an output
// is written to a temporary file in the same folder and renamed over the target, so a reader never
// sees a half-written file.
#include <memory>
#include <string>
#include <string_view>

struct z_stream_s;

namespace sparsetune::io {

// The raw bytes of a file; throws Error naming the file when it cannot be read.
std::string read_file(const std::string& path);

// At most the first `n` bytes of a file (fewer when it is shorter); throws Error like read_file.
std::string read_file_prefix(const std::string& path, std::size_t n);

// True when the bytes start with the gzip magic 1f 8b.
bool is_gzip(std::string_view bytes);

// Incremental gzip decompression of a buffer held in memory (every member of a multi-member
// file); `source` names the data in error messages. Throws Error on corrupt or truncated data.
class GunzipStream {
 public:
  GunzipStream(std::string_view compressed, std::string source);
  ~GunzipStream();
  GunzipStream(const GunzipStream&) = delete;
  GunzipStream& operator=(const GunzipStream&) = delete;

  // Fills dst with up to n bytes; returns how many. Fewer than n only at the end of the data.
  std::size_t read(char* dst, std::size_t n);
  bool done() const { return done_; }
  // A guess of the decompressed size, from the gzip trailer.
  std::size_t size_hint() const;

 private:
  std::string_view in_;
  std::string source_;
  std::unique_ptr<z_stream_s> z_;
  std::size_t pos_ = 0;
  bool done_ = false;
};

// Inflates every gzip member of `bytes`; `source` names the data in error messages.
std::string gunzip(std::string_view bytes, const std::string& source);

// Deflates `bytes` into a single gzip member.
std::string gzip(std::string_view bytes, int level = 6);

// The contents of a file, decompressed when it is gzip.
std::string read_file_decompressed(const std::string& path);

// True when the name ends with `suffix`, ignoring ASCII case.
bool ends_with_nocase(std::string_view name, std::string_view suffix);

// An output written piecewise to a temporary file in the target's folder; commit() renames it
// over the target. Destroying it without commit() removes the temporary, so a failed write
// leaves the previous file (or none) in place, and so does an interrupt (SIGINT, SIGTERM, SIGHUP;
// io/interrupt_cleanup.hpp).
class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::string_view bytes);
  void commit();

 private:
  [[noreturn]] void fail(const std::string& what);
  std::string path_, tmp_;
  int fd_ = -1;
  int interrupt_slot_ = -1;  // the temporary, removed if the process is interrupted
};

// Writes `bytes` to `path` through an AtomicFile.
void write_file_atomic(const std::string& path, std::string_view bytes);

}  // namespace sparsetune::io
