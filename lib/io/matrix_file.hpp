#pragma once
// Reading and writing a matrix in any supported file format:
//   .mtx / .mtx.gz   Matrix Market (gzip recognised by its magic bytes, whatever the name)
//   .safetensors     the sparsetune matrix container (io/matrix_container.hpp)
#include <string>

#include "core/matrix.hpp"

namespace sparsetune::io {

struct MtxInfo;

enum class Layout { csr, coo };

// Any supported matrix file as CSR with sorted columns; duplicate entries are summed and their
// number reported in a warning naming the file. `info`, when given, describes the file (for a
// container: coordinate, real, general).
Csr64 read_matrix(const std::string& path, MtxInfo* info = nullptr);

// Writes `a` in the format the extension names: ".mtx", ".mtx.gz" or ".safetensors" (with the
// given layout). Atomic: a temporary file in the same folder is renamed over `path`.
void write_matrix(const std::string& path, const Csr64& a, Layout layout = Layout::csr);

// Throws the error write_matrix would give for a name with no known extension, so that a
// command can refuse it before reading a large input.
void check_matrix_output_name(const std::string& path);

}  // namespace sparsetune::io
