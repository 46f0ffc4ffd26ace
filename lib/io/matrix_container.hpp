#pragma once
// The sparsetune matrix container: a safetensors file holding one sparse matrix.
//   layout "csr": row_ptr [rows+1], col_idx [nnz], val [nnz] (F64)
//   layout "coo": row [nnz], col [nnz], val [nnz] (F64)
// Index arrays are I32 when every value fits, else I64. __metadata__ holds
// format = "sparsetune-matrix", version = "1", layout, rows, cols and nnz (decimal strings).
#include <cstdint>
#include <string>

#include "core/matrix.hpp"
#include "io/matrix_file.hpp"
#include "io/safetensors.hpp"

namespace sparsetune::io {

inline constexpr const char* kMatrixFormatName = "sparsetune-matrix";
inline constexpr const char* kMatrixFormatVersion = "1";

// The container's arrays and metadata for `a`; throws Error on a non-finite value.
SafetensorsFile matrix_to_safetensors(const Csr64& a, Layout layout = Layout::csr);

// True when the metadata says this file is a sparsetune matrix container.
bool is_matrix_container(const SafetensorsFile& f);

// Validates a container (metadata, dtypes, shapes, monotone row_ptr, indices in range, finite
// values) and returns its matrix as sorted CSR. Rows with unsorted or repeated columns, and COO
// layouts, are sorted with duplicates summed; `duplicates` receives how many were merged.
Csr64 matrix_from_safetensors(const SafetensorsFile& f, const std::string& source,
                              std::int64_t* duplicates = nullptr);

void write_matrix_container(const std::string& path, const Csr64& a, Layout layout = Layout::csr);
Csr64 read_matrix_container(const std::string& path, std::int64_t* duplicates = nullptr);

}  // namespace sparsetune::io
