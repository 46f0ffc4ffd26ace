#pragma once
// Errors the tool reports to its user. Every message names where the problem is.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace sparsetune {

// Any failure a user can cause (bad input, bad option, unsupported case).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A problem inside an input file, located by file name and 1-based line.
class InputError : public Error {
 public:
  InputError(const std::string& file, std::int64_t line, const std::string& what)
      : Error(located(file, line, what)), file_(file), line_(line) {}
  const std::string& file() const { return file_; }
  std::int64_t line() const { return line_; }

 private:
  static std::string located(const std::string& file, std::int64_t line, const std::string& what) {
    std::string m = file;
    if (line > 0) m.append(":").append(std::to_string(line));
    m.append(": ").append(what);
    return m;
  }
  std::string file_;
  std::int64_t line_;
};

}  // namespace sparsetune
