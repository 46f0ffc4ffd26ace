#include "io/file_bytes.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "core/error.hpp"
#include "io/interrupt_cleanup.hpp"

namespace sparsetune::io {

namespace {
std::string errno_text() { return std::strerror(errno); }

// Closes a POSIX descriptor on scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Opens `path` into `f` and fills `st`, refusing a folder by name.
void open_for_reading(Fd& f, const std::string& path, struct stat& st) {
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) throw Error(path + ": cannot open: " + errno_text());
  if (::fstat(f.fd, &st) == 0 && S_ISDIR(st.st_mode))
    throw Error(path + ": is a folder, not a file");
}

// zlib counts in 32-bit units; larger inputs are fed in pieces of this size.
constexpr std::size_t kZlibStep = std::size_t{1} << 30;
}  // namespace

std::string read_file(const std::string& path) {
  Fd f;
  struct stat st {};
  open_for_reading(f, path, st);
  std::string out;
  off_t size = S_ISREG(st.st_mode) ? ::lseek(f.fd, 0, SEEK_END) : 0;
  if (size > 0) out.reserve(static_cast<std::size_t>(size));
  ::lseek(f.fd, 0, SEEK_SET);
  std::size_t used = 0;
  out.resize(std::max<std::size_t>(static_cast<std::size_t>(size > 0 ? size : 0) + 1, 1 << 16));
  for (;;) {
    if (used == out.size()) out.resize(out.size() * 2);
    ssize_t n = ::read(f.fd, out.data() + used, out.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(path + ": cannot read: " + errno_text());
    }
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  out.resize(used);
  return out;
}

std::string read_file_prefix(const std::string& path, std::size_t n) {
  Fd f;
  struct stat st {};
  open_for_reading(f, path, st);
  std::string out(n, '\0');
  std::size_t used = 0;
  while (used < n) {
    ssize_t got = ::read(f.fd, out.data() + used, n - used);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw Error(path + ": cannot read: " + errno_text());
    }
    if (got == 0) break;
    used += static_cast<std::size_t>(got);
  }
  out.resize(used);
  return out;
}

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

GunzipStream::GunzipStream(std::string_view compressed, std::string source)
    : in_(compressed), source_(std::move(source)), z_(std::make_unique<z_stream>()) {
  *z_ = z_stream{};
  if (inflateInit2(z_.get(), 15 + 16) != Z_OK) throw Error(source_ + ": cannot initialise zlib");
}

GunzipStream::~GunzipStream() { inflateEnd(z_.get()); }

std::size_t GunzipStream::size_hint() const {
  // The gzip trailer holds the uncompressed size modulo 2^32: capped so that a forged trailer
  // cannot make a caller reserve absurd amounts.
  std::size_t guess = in_.size() * 4 + 4096;
  if (in_.size() >= 18) {
    std::uint32_t isize = 0;
    std::memcpy(&isize, in_.data() + in_.size() - 4, 4);
    guess = std::max<std::size_t>(guess, std::min<std::size_t>(isize + 1, in_.size() * 1100));
  }
  return guess;
}

std::size_t GunzipStream::read(char* dst, std::size_t n) {
  std::size_t used = 0;
  while (used < n && !done_) {
    const std::size_t in_step = std::min(in_.size() - pos_, kZlibStep);
    const std::size_t out_step = std::min(n - used, kZlibStep);
    z_->next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in_.data() + pos_));
    z_->avail_in = static_cast<uInt>(in_step);
    z_->next_out = reinterpret_cast<Bytef*>(dst + used);
    z_->avail_out = static_cast<uInt>(out_step);
    const int rc = inflate(z_.get(), Z_NO_FLUSH);
    pos_ += in_step - z_->avail_in;
    used += out_step - z_->avail_out;
    if (rc == Z_STREAM_END) {
      // Concatenated members are one stream to gzip(1); trailing zero padding is tolerated.
      const std::string_view rest = in_.substr(pos_);
      if (is_gzip(rest)) {
        inflateReset(z_.get());
        continue;
      }
      if (std::any_of(rest.begin(), rest.end(), [](char c) { return c != 0; }))
        throw Error(source_ + ": unexpected data after the end of the gzip stream");
      done_ = true;
    } else if (rc == Z_OK || (rc == Z_BUF_ERROR && z_->avail_out == 0)) {
      continue;
    } else if (rc == Z_BUF_ERROR && pos_ == in_.size()) {
      throw Error(source_ + ": truncated gzip data (the stream ends early)");
    } else {
      throw Error(source_ + ": corrupt gzip data" +
                  (z_->msg ? std::string(": ") + z_->msg : std::string()));
    }
  }
  return used;
}

std::string gunzip(std::string_view bytes, const std::string& source) {
  GunzipStream in(bytes, source);
  std::string out(in.size_hint(), '\0');
  std::size_t used = 0;
  while (!in.done()) {
    if (used == out.size()) out.resize(out.size() * 2);
    used += in.read(out.data() + used, out.size() - used);
  }
  out.resize(used);
  return out;
}

std::string gzip(std::string_view bytes, int level) {
  z_stream s{};
  if (deflateInit2(&s, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw Error("cannot initialise zlib");
  struct End {
    z_stream* s;
    ~End() { deflateEnd(s); }
  } end{&s};
  std::string out(deflateBound(&s, static_cast<uLong>(std::min(bytes.size(), kZlibStep))) +
                      bytes.size() / 2 + 64,
                  '\0');
  std::size_t used = 0, in_pos = 0;
  for (;;) {
    if (out.size() - used < 64) out.resize(out.size() * 2);
    std::size_t in_step = std::min(bytes.size() - in_pos, kZlibStep);
    std::size_t out_step = std::min(out.size() - used, kZlibStep);
    s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + in_pos));
    s.avail_in = static_cast<uInt>(in_step);
    s.next_out = reinterpret_cast<Bytef*>(out.data() + used);
    s.avail_out = static_cast<uInt>(out_step);
    const bool last = in_pos + in_step == bytes.size();
    int rc = deflate(&s, last ? Z_FINISH : Z_NO_FLUSH);
    in_pos += in_step - s.avail_in;
    used += out_step - s.avail_out;
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK && rc != Z_BUF_ERROR) throw Error("zlib deflate failed");
  }
  out.resize(used);
  return out;
}

std::string read_file_decompressed(const std::string& path) {
  std::string bytes = read_file(path);
  if (is_gzip(bytes)) return gunzip(bytes, path);
  return bytes;
}

bool ends_with_nocase(std::string_view name, std::string_view suffix) {
  if (name.size() < suffix.size()) return false;
  auto tail = name.substr(name.size() - suffix.size());
  return std::equal(tail.begin(), tail.end(), suffix.begin(), [](char a, char b) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    return lower(a) == lower(b);
  });
}

AtomicFile::AtomicFile(const std::string& path) : path_(path) {
  static std::atomic<unsigned> counter{0};
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty()) throw Error(path + ": not a file name");
  tmp_ = dir + "." + base + ".tmp-" + std::to_string(::getpid()) + "-" +
         std::to_string(counter.fetch_add(1));
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd_ < 0) throw Error(path + ": cannot create a temporary file: " + errno_text());
  interrupt_slot_ = remove_on_interrupt(tmp_);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
  forget_on_interrupt(interrupt_slot_);
}

void AtomicFile::fail(const std::string& what) {
  const std::string text = errno_text();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(tmp_.c_str());
  forget_on_interrupt(interrupt_slot_);
  interrupt_slot_ = -1;
  throw Error(path_ + ": " + what + ": " + text);
}

void AtomicFile::write(std::string_view bytes) {
  if (fd_ < 0) throw Error(path_ + ": write after the file was closed");
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd_, bytes.data() + done, std::min(bytes.size() - done, kZlibStep));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot write");
    }
    done += static_cast<std::size_t>(n);
  }
}

void AtomicFile::commit() {
  if (fd_ < 0) throw Error(path_ + ": commit after the file was closed");
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) {
    errno = errno ? errno : EIO;
    const std::string text = errno_text();
    ::unlink(tmp_.c_str());
    throw Error(path_ + ": cannot write: " + text);
  }
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const std::string text = errno_text();
    ::unlink(tmp_.c_str());
    throw Error(path_ + ": cannot replace the file: " + text);
  }
  forget_on_interrupt(interrupt_slot_);
  interrupt_slot_ = -1;
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
  AtomicFile f(path);
  f.write(bytes);
  f.commit();
}

}  // namespace sparsetune::io
