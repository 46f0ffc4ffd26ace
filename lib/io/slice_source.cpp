#include "io/slice_source.hpp"

#include "io/file_bytes.hpp"
#include "io/matrix_file.hpp"
#include "io/safetensors.hpp"
#include "io/tensor_container.hpp"
#include "io/tensor_file.hpp"

namespace sparsetune::io {

bool is_matrix_source(const std::string& path) {
  if (ends_with_nocase(path, ".mtx") || ends_with_nocase(path, ".mtx.gz")) return true;
  if (!ends_with_nocase(path, ".safetensors")) return false;
  const auto meta = read_safetensors_metadata(path);
  return meta && !is_tensor_container(*meta);
}

SparseTensor matrix_as_slice(const Csr64& a) {
  SparseTensor t;
  t.dims = {a.rows, a.cols, 1};
  t.idx.assign(3, {});
  for (auto& v : t.idx) v.reserve(a.col_idx.size());
  t.val.reserve(a.col_idx.size());
  // CSR with sorted columns is already in the readers' order (mode 0, then 1, then 2).
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (auto k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
      t.idx[0].push_back(r);
      t.idx[1].push_back(a.col_idx[k]);
      t.idx[2].push_back(0);
      t.val.push_back(a.val[k]);
    }
  return t;
}

SliceSource read_slice_source(const std::string& path) {
  if (is_matrix_source(path)) return {matrix_as_slice(read_matrix(path)), true};
  return {read_tensor(path), false};
}

}  // namespace sparsetune::io
