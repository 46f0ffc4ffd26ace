#pragma once
// What Slice-GCN's labels are measured on and learned from: slices of tensors, and matrices.
// IAP-SpTV trains Slice-GCN on 2,041 SuiteSparse matrices (§6.1), each labelled by its fastest
// slice format, and applies it to the slices of tensors. A matrix file read here is the one
// slice of an order-3 tensor of dims (rows, cols, 1): multiplied along mode 1 (its columns) and
// sliced along mode 2, its slice 0 is the matrix itself, row for row.
#include <string>

#include "core/matrix.hpp"
#include "core/tensor.hpp"

namespace sparsetune::io {

// The mode a matrix's slice is multiplied along, and the only mode it is timed in.
inline constexpr int kMatrixSliceMode = 1;

struct SliceSource {
  SparseTensor tensor;
  bool matrix = false;  // read from a matrix file: one slice, mode kMatrixSliceMode only
};

// True for a .mtx or .mtx.gz name, or a safetensors file holding a matrix container (only its
// header is read).
bool is_matrix_source(const std::string& path);

// A matrix (is_matrix_source) as matrix_as_slice; every other file read as a tensor
// (io/tensor_file.hpp), with that reader's errors.
SliceSource read_slice_source(const std::string& path);

// The order-3 tensor (rows, cols, 1) whose slice along mode 2 is `a`.
SparseTensor matrix_as_slice(const Csr64& a);

}  // namespace sparsetune::io
