#pragma once
// Helpers shared by the io tests: a private temporary folder and small file utilities.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/matrix.hpp"
#include "test_support.hpp"

namespace iotest {

// A fresh folder under the system temp dir, removed when the test ends.
// Temporary folders come from the shared test support.
using TempDir = sparsetune::testing::TempDir;

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Number of entries in a folder (to check that no temporary file was left behind).
inline int count_entries(const std::filesystem::path& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

// Every field of a CSR against values worked out by hand.
inline void check_csr(const sparsetune::Csr64& a, std::int64_t rows, std::int64_t cols,
                      const std::vector<std::int64_t>& row_ptr,
                      const std::vector<std::int64_t>& col_idx, const std::vector<double>& val) {
  CHECK(a.rows == rows);
  CHECK(a.cols == cols);
  CHECK(a.row_ptr == row_ptr);
  CHECK(a.col_idx == col_idx);
  CHECK(a.val == val);
}

}  // namespace iotest

// Checks that `expr` throws an exception whose message contains every one of the strings.
#define CHECK_THROWS_CONTAINING(expr, ...)                                     \
  do {                                                                         \
    bool threw_ = false;                                                       \
    try {                                                                      \
      (void)(expr);                                                            \
    } catch (const std::exception& e_) {                                       \
      threw_ = true;                                                           \
      const std::string msg_ = e_.what();                                      \
      for (const std::string& part_ : std::vector<std::string>{__VA_ARGS__}) { \
        INFO("message: " << msg_);                                             \
        CHECK(msg_.find(part_) != std::string::npos);                          \
      }                                                                        \
    }                                                                          \
    if (!threw_) FAIL_CHECK("expected an exception from " #expr);              \
  } while (0)
