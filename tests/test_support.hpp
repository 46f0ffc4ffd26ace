#pragma once
// Pieces every test tier shares: a temporary folder removed with everything in it, and the
// folder of shared matrices and tensors.
#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace sparsetune::testing {

// A fresh folder under the system's temporary directory, removed on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "sparsetune-test") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path / name).string(); }

  std::filesystem::path path;
};

// The shared matrices and tensors: $SPARSETUNE_SHARED_DIR when set (on a lent GPU machine they
// travel in another folder), else the compiled-in ../shared of the source tree.
inline std::filesystem::path shared_dir() {
  if (const char* e = std::getenv("SPARSETUNE_SHARED_DIR"); e && *e) return e;
#ifdef SPARSETUNE_SHARED_DIR
  return SPARSETUNE_SHARED_DIR;
#else
  return "../shared";
#endif
}

}  // namespace sparsetune::testing
