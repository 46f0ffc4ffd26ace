#pragma once
// Reading and writing a tensor in any supported file format, the way io/matrix_file.hpp does for
// matrices:
//   .tns / .tns.gz   FROSTT text (gzip recognised by its magic bytes, whatever the name)
//   .safetensors     the sparsetune tensor container (io/tensor_container.hpp)
#include <string>

#include "core/tensor.hpp"
#include "io/tns.hpp"

namespace sparsetune::io {

// Any supported tensor file, sorted by (mode 0, mode 1, ...) with repeated coordinates summed. A
// container is recognised by its content, or by the .safetensors extension so that a truncated
// one gets the container's error.
SparseTensor read_tensor(const std::string& path, TnsInfo* info = nullptr);

// Writes `t` in the format the extension names: ".tns", ".tns.gz" or ".safetensors". Atomic.
void write_tensor(const std::string& path, const SparseTensor& t);

// Throws the error write_tensor would give for a name with no known extension, so that a command
// can refuse it before generating or reading a large input.
void check_tensor_output_name(const std::string& path);

// True when `path` names a tensor: a .tns or .tns.gz name, or a safetensors file whose metadata
// says it is a tensor container (only its header is read).
bool is_tensor_file(const std::string& path);

}  // namespace sparsetune::io
