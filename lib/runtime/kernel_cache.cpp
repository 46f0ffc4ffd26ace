#include "runtime/kernel_cache.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "core/error.hpp"

namespace sparsetune::runtime {

std::uint64_t fnv1a64(const void* data, std::size_t size, std::uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t h = seed;
  for (std::size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

std::filesystem::path KernelCache::default_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return std::filesystem::path(x) / "sparsetune";
  if (const char* h = std::getenv("HOME"); h && *h)
    return std::filesystem::path(h) / ".cache" / "sparsetune";
  return std::filesystem::temp_directory_path() / "sparsetune-cache";
}

KernelCache::KernelCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

std::string KernelCache::key(const std::string& source, const std::string& arch,
                             const std::string& nvrtc_version,
                             const std::vector<std::string>& options) {
  // Each field is length-prefixed so that no two different inputs hash the same byte stream.
  std::string all;
  auto add = [&all](const std::string& s) {
    all += std::to_string(s.size());
    all += ':';
    all += s;
  };
  add(source);
  add(arch);
  add(nvrtc_version);
  for (const auto& o : options) add(o);
  const std::uint64_t a = fnv1a64(all.data(), all.size());
  const std::uint64_t b = fnv1a64(all.data(), all.size(), 0x84222325cbf29ce4ull ^ all.size());
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return buf;
}

std::optional<std::vector<char>> KernelCache::get(const std::string& key) const {
  std::vector<char> data;
  try {
    data = read_file_bytes(dir_ / (key + ".cubin"));
  } catch (const Error&) {
    return std::nullopt;
  }
  if (data.empty()) return std::nullopt;
  return data;
}

void KernelCache::put(const std::string& key, const std::vector<char>& data) const {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) throw Error("kernel cache: cannot create " + dir_.string() + ": " + ec.message());
  write_file_atomic(dir_ / (key + ".cubin"), data.data(), data.size());
}

std::vector<char> read_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error("cannot open " + path.string());
  const std::streamoff size = in.tellg();
  if (size < 0) throw Error("cannot read " + path.string());
  std::vector<char> data(static_cast<std::size_t>(size));
  in.seekg(0);
  if (size > 0 && !in.read(data.data(), size)) throw Error("cannot read " + path.string());
  return data;
}

void write_file_atomic(const std::filesystem::path& path, const void* data, std::size_t size) {
  static std::atomic<unsigned> counter{0};
  auto tmp = path;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error("cannot write " + tmp.string());
  const bool ok = std::fwrite(data, 1, size, f) == size && std::fflush(f) == 0;
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    throw Error("cannot write " + tmp.string());
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error("cannot rename " + tmp.string() + " to " + path.string());
  }
}

}  // namespace sparsetune::runtime
