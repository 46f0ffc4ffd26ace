#pragma once
// The matrix or tensor handed from the parent to the worker, as a file in the safetensors layout
// (8-byte little-endian header length, JSON header with each array's dtype, shape and byte range,
// then the data). Readers check every offset and size.
#include <filesystem>

#include "core/matrix.hpp"
#include "core/tensor.hpp"

namespace sparsetune::runtime {

void write_problem(const std::filesystem::path& path, const Csr64& a);
void write_problem(const std::filesystem::path& path, const SparseTensor& t);

// Throw Error if the file is missing, malformed or holds the other kind of problem.
Csr64 read_matrix_problem(const std::filesystem::path& path);
SparseTensor read_tensor_problem(const std::filesystem::path& path);

}  // namespace sparsetune::runtime
