#pragma once
// The sparsetune tensor container: a safetensors file holding one sparse tensor in coordinate
// form, so that a tensor of 10^8 entries is read and written in seconds (its .tns text would be
// gigabytes to print and parse).
//   idx0 .. idx<N-1> [nnz]: the 0-based index of every entry along each mode; I32 when the mode's
//                           dimension is at most 2^31, else I64
//   val [nnz]:              F32 when every value is exactly a float, else F64
// __metadata__ holds format = "sparsetune-tensor", version = "1", order, dims (comma-separated)
// and nnz (decimal strings). Entries are written sorted lexicographically by (mode 0, mode 1, ...)
// without repeated coordinates.
#include <cstdint>
#include <string>
#include <string_view>

#include "core/tensor.hpp"
#include "io/safetensors.hpp"
#include "io/tns.hpp"

namespace sparsetune::io {

inline constexpr const char* kTensorFormatName = "sparsetune-tensor";
inline constexpr const char* kTensorFormatVersion = "1";

// The container's arrays and metadata for `t` (order 3 to kMaxTensorOrder, indices inside dims,
// finite values); throws Error otherwise.
SafetensorsFile tensor_to_safetensors(const SparseTensor& t);

// True when the metadata says this is a sparsetune tensor container.
bool is_tensor_container(const std::map<std::string, std::string>& metadata);

// Validates a container held in memory (metadata, array names, dtypes, lengths, every index
// inside its dimension, finite values) and returns its tensor as read_tns does: sorted by
// (mode 0, mode 1, ...) with repeated coordinates summed (and a warning naming `source`).
SparseTensor parse_tensor_container(std::string_view bytes, const std::string& source,
                                    TnsInfo* info = nullptr);

void write_tensor_container(const std::string& path, const SparseTensor& t);
SparseTensor read_tensor_container(const std::string& path, TnsInfo* info = nullptr);

}  // namespace sparsetune::io
