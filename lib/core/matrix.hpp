#pragma once
// Sparse matrix containers. Values are always fp64 on the host: they are the ground truth that
// every GPU data type is converted from and checked against. Index (I) and offset (P) widths are
// template parameters so that the same code serves 32- and 64-bit layouts.
#include <cstdint>
#include <vector>

namespace sparsetune {

// Coordinate list. Not necessarily sorted or free of duplicates unless `sorted` says so.
template <class I>
struct Coo {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<I> row;
  std::vector<I> col;
  std::vector<double> val;
  std::int64_t nnz() const { return static_cast<std::int64_t>(val.size()); }
};

// Compressed sparse row: row_ptr has rows + 1 entries; columns are sorted within each row.
template <class I, class P = I>
struct Csr {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<P> row_ptr;
  std::vector<I> col_idx;
  std::vector<double> val;
  std::int64_t nnz() const { return static_cast<std::int64_t>(val.size()); }
  std::int64_t row_length(std::int64_t r) const {
    return static_cast<std::int64_t>(row_ptr[r + 1] - row_ptr[r]);
  }
};

// Compressed sparse column: col_ptr has cols + 1 entries; rows sorted within each column.
template <class I, class P = I>
struct Csc {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<P> col_ptr;
  std::vector<I> row_idx;
  std::vector<double> val;
  std::int64_t nnz() const { return static_cast<std::int64_t>(val.size()); }
};

using Coo64 = Coo<std::int64_t>;
using Csr64 = Csr<std::int64_t, std::int64_t>;
using Csr32 = Csr<std::int32_t, std::int32_t>;
// 32-bit column indices with 64-bit row pointers: the layout for nnz >= 2^31.
using Csr32L = Csr<std::int32_t, std::int64_t>;
using Csc64 = Csc<std::int64_t, std::int64_t>;

// True when a CSR with this many non-zeros needs 64-bit row pointers.
inline bool needs_64bit_offsets(std::int64_t nnz) { return nnz >= (std::int64_t{1} << 31); }

}  // namespace sparsetune
