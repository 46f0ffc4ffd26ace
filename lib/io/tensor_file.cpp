#include "io/tensor_file.hpp"

#include "core/error.hpp"
#include "io/file_bytes.hpp"
#include "io/safetensors.hpp"
#include "io/tensor_container.hpp"

namespace sparsetune::io {

namespace {
bool tns_name(const std::string& path) {
  return ends_with_nocase(path, ".tns") || ends_with_nocase(path, ".tns.gz");
}
}  // namespace

SparseTensor read_tensor(const std::string& path, TnsInfo* info) {
  std::string bytes = read_file(path);
  if (is_gzip(bytes)) bytes = gunzip(bytes, path);
  if (looks_like_safetensors(bytes) || ends_with_nocase(path, ".safetensors"))
    return parse_tensor_container(bytes, path, info);
  if (bytes.compare(0, 14, "%%MatrixMarket") == 0)
    throw InputError(path, 1,
                     "this is a Matrix Market (matrix) file; a tensor (.tns) is needed here");
  return parse_tns(bytes, path, info);
}

void write_tensor(const std::string& path, const SparseTensor& t) {
  check_tensor_output_name(path);
  if (ends_with_nocase(path, ".safetensors")) return write_tensor_container(path, t);
  write_tns(path, t);
}

void check_tensor_output_name(const std::string& path) {
  if (!tns_name(path) && !ends_with_nocase(path, ".safetensors"))
    throw Error(path + ": unknown tensor output format (use .tns, .tns.gz or .safetensors)");
}

bool is_tensor_file(const std::string& path) {
  if (tns_name(path)) return true;
  const auto meta = read_safetensors_metadata(path);
  return meta && is_tensor_container(*meta);
}

}  // namespace sparsetune::io
