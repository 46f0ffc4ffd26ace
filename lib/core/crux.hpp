#pragma once
// MatXtract's compute density extraction and its cascaded compression of the hot region
// (TACO'26, §3 and §4.1-4.2), as plain data transformations of a CSR matrix:
//  - crux_split(τc, τr): the columns sorted by length, the fewest covering ⌈τc·nnz⌉ entries;
//    within them the rows sorted by their local length, the fewest covering ⌈τr·nnz⌉ entries.
//    Those rows × columns are the hot region, everything else the cold one. 0 ≤ τr ≤ τc ≤ 1;
//    τr = 0 leaves all cold, τc = τr = 1 all hot.
//  - tcu_compress: the hot rows cut into chunks of tcH rows (the TC block height); per chunk only
//    the columns with an entry in it (TCU-aware compression), grouped tcW at a time into TC blocks.
//  - two encodings of the compressed hot region: dense unfolding (a bitmap per TC block, its
//    columns, its entries) and sparse encoding (per chunk, rows padded to a common length).
//  - the storage criterion of §4.2.4: dense unfolding where it stores fewer bytes.
// The tensor-core operators of the IR build their format arrays from these; the CPU products
// below are their reference semantics.
#include <cstdint>
#include <vector>

#include "core/matrix.hpp"

namespace sparsetune::crux {

struct CruxSplit {
  double tau_c = 0, tau_r = 0;
  std::vector<std::int64_t> hot_cols;  // by column length, longest first (ties: lower index)
  std::vector<std::int64_t> hot_rows;  // by local length in hot_cols, longest first
  // The hot region: row i is matrix row hot_rows[i], columns keep their matrix indices (only
  // hot_cols occur), so x is read through no permutation.
  Csr64 hot;
  Csr64 cold;                     // the matrix's shape, every entry outside the hot region
  std::int64_t column_cover = 0;  // entries of the matrix in hot_cols
};

// Throws Error naming the crux when not 0 ≤ τr ≤ τc ≤ 1.
CruxSplit crux_split(const Csr64& a, double tau_c, double tau_r);

// TC block shape: height tcH (rows per chunk), width tcW (columns per block). fp64 m8n8k4 uses
// 8 × 4, fp16 m16n8k8 with the transposed fragment 8 × 8. tcH · tcW ≤ 64 (one bitmap word).
struct TcShape {
  int h = 8, w = 4;
};

// The hot region after TCU-aware compression: per chunk of h consecutive hot rows, the columns
// with an entry in the chunk (sorted), padded to a multiple of w with a repeat of the chunk's
// last column (its values are zero, so x is always read in bounds).
struct Compressed {
  TcShape shape;
  std::int64_t rows = 0;                  // hot rows
  std::vector<std::int64_t> chunk_block;  // [chunks + 1] first TC block of each chunk
  std::vector<std::int64_t> block_col;    // [blocks * w] matrix column of each block column
  std::vector<std::int64_t> chunk_cols;   // [chunks] distinct columns of each chunk (unpadded)
  std::int64_t empty_columns = 0;         // columns of the hot region absent from a chunk, summed
};
Compressed tcu_compress(const CruxSplit& s, TcShape shape);

// Dense unfolding (§4.2.1): ChunkPtr, TCBit, TCCol, TCPtr, Val. Bit r·w + c of a block's bitmap
// is entry (row r of the chunk, block column c); Val holds each block's entries in that order.
struct DenseUnfolding {
  TcShape shape;
  std::vector<std::int64_t> chunk_ptr;  // = Compressed::chunk_block
  std::vector<std::uint64_t> tc_bit;    // [blocks]
  std::vector<std::int64_t> tc_col;     // [blocks * w]
  std::vector<std::int64_t> tc_ptr;     // [blocks + 1]
  std::vector<double> val;              // [hot nnz]
};
DenseUnfolding dense_unfold(const CruxSplit& s, const Compressed& c);

// Sparse encoding (§4.2.2): per chunk, each row's entries in column order, padded with zeros to
// the chunk's longest row rounded up to w; stored block by block (h × w, row-major), so a TC
// step reads h·w consecutive values. Padding repeats the row's last column (or the chunk's first
// column for an empty row) with value 0.
struct SparseEncoding {
  TcShape shape;
  std::vector<std::int64_t> block_ptr;  // [chunks + 1] first value of each chunk
  std::vector<std::int64_t> col;
  std::vector<double> val;
};
SparseEncoding sparse_encode(const CruxSplit& s, TcShape shape);

// §4.2.4: bytes of each encoding with b_val / b_idx bytes per value / index (dense unfolding
// with its actual TC blocks; sparse encoding without padding, as the paper states it), and the
// choice: dense unfolding when it is smaller.
struct StorageChoice {
  double dense_unfolding_bytes = 0, sparse_encoding_bytes = 0;
  bool dense_unfolding = false;
};
StorageChoice choose_storage(const CruxSplit& s, const Compressed& c, int b_val, int b_idx);

// Reference products: y = A x from the split (hot rows through each encoding, plus the cold part).
std::vector<double> spmv_dense_unfolding(const CruxSplit& s, const DenseUnfolding& du,
                                         const std::vector<double>& x);
std::vector<double> spmv_sparse_encoding(const CruxSplit& s, const SparseEncoding& se,
                                         const std::vector<double>& x);

}  // namespace sparsetune::crux
