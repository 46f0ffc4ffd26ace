#include "io/matrix_file.hpp"

#include <spdlog/spdlog.h>

#include <new>
#include <stdexcept>

#include "core/convert.hpp"
#include "core/error.hpp"
#include "io/file_bytes.hpp"
#include "io/matrix_container.hpp"
#include "io/matrix_market.hpp"
#include "io/safetensors.hpp"

namespace sparsetune::io {

Csr64 read_matrix(const std::string& path, MtxInfo* info) {
  std::string bytes = read_file(path);
  MtxInfo local;
  MtxInfo& mi = info ? *info : local;
  Csr64 a;
  std::int64_t dups = 0;
  // By content, or by name so that a truncated container gets the container's error message.
  // A gzip other than .mtx.gz (whose reader decompresses as it goes) may hold a container.
  if (is_gzip(bytes) && !ends_with_nocase(path, ".mtx.gz")) bytes = gunzip(bytes, path);
  if (looks_like_safetensors(bytes) || ends_with_nocase(path, ".safetensors")) {
    a = matrix_from_safetensors(parse_safetensors(bytes, path), path, &dups);
    mi = MtxInfo{};
    mi.rows = a.rows;
    mi.cols = a.cols;
    mi.stored_entries = a.nnz() + dups;
    mi.expanded_entries = a.nnz() + dups;
  } else {
    if (ends_with_nocase(path, ".tns") || ends_with_nocase(path, ".tns.gz"))
      throw InputError(path, 0, "this is a tensor (.tns) file; a matrix file is needed here");
    try {
      a = parse_matrix_market_csr(bytes, path, &mi);
    } catch (const std::bad_alloc&) {
      throw Error(path + ": the CSR of this matrix does not fit in memory");
    } catch (const std::length_error&) {
      throw Error(path + ": the CSR of this matrix does not fit in memory");
    }
    dups = mi.duplicates;
  }
  mi.duplicates = dups;
  if (dups > 0) spdlog::warn("{}: {} duplicate entries were summed", path, dups);
  return a;
}

void write_matrix(const std::string& path, const Csr64& a, Layout layout) {
  if (ends_with_nocase(path, ".safetensors")) return write_matrix_container(path, a, layout);
  if (ends_with_nocase(path, ".mtx") || ends_with_nocase(path, ".mtx.gz"))
    return write_matrix_market(path, a);
  check_matrix_output_name(path);
}

void check_matrix_output_name(const std::string& path) {
  if (!ends_with_nocase(path, ".safetensors") && !ends_with_nocase(path, ".mtx") &&
      !ends_with_nocase(path, ".mtx.gz"))
    throw Error(path + ": unknown output format (use .mtx, .mtx.gz or .safetensors)");
}

}  // namespace sparsetune::io
