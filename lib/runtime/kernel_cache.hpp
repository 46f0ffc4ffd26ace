#pragma once
// On-disk cache of compiled kernels. An entry is keyed by a hash of everything that changes the
// machine code: the source, the target architecture, the NVRTC version and the options.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace sparsetune::runtime {

class KernelCache {
 public:
  // $XDG_CACHE_HOME/sparsetune, else $HOME/.cache/sparsetune.
  static std::filesystem::path default_dir();

  explicit KernelCache(std::filesystem::path dir = default_dir());

  // 32 hex digits naming the entry of this compilation.
  static std::string key(const std::string& source, const std::string& arch,
                         const std::string& nvrtc_version, const std::vector<std::string>& options);

  std::optional<std::vector<char>> get(const std::string& key) const;
  // Written to a temporary file in the cache folder, then renamed: readers never see a partial
  // entry, and concurrent writers of one key leave one whole entry.
  void put(const std::string& key, const std::vector<char>& data) const;

  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

// 64-bit FNV-1a of bytes, continuing from `seed`.
std::uint64_t fnv1a64(const void* data, std::size_t size,
                      std::uint64_t seed = 0xcbf29ce484222325ull);

// The whole file in one sized read (a stream iterator copies a byte at a time: ~100 ms for a
// 20 MB plan, which every measurement reads). Throws Error naming the file.
std::vector<char> read_file_bytes(const std::filesystem::path& path);

// Writes `data` to `path` atomically (temporary file beside it, then rename). Throws Error.
void write_file_atomic(const std::filesystem::path& path, const void* data, std::size_t size);

}  // namespace sparsetune::runtime
