#pragma once
// LiteForm's Composable Ellpack format, CELL (HPDC'25, §4 and §5.3), as a data transformation of a
// CSR matrix, with the paper's SpMM cost model and its bucket-width search:
//  - the columns are cut evenly into P partitions;
//  - in a partition, a row of l entries goes to bucket i of width 2^i with 2^(i-1) < l <= 2^i;
//    rows longer than the partition's largest width W_max are folded into ⌈l / W_max⌉ rows of the
//    W_max bucket, all with the row's index;
//  - each bucket is an ELL matrix (rowInd; colInd and val at [i·W + j], Fig. 4), its rows grouped
//    2^k / W at a time into blocks of 2^k slots (2^k = block_factor · W_max), padded with rows of
//    index -1 (Fig. 4's "*") to whole blocks;
//  - a bucket adds into C atomically when the matrix has several partitions or it is the
//    partition's widest bucket (where folded rows are);
//  - cost(bucket) = 2·I1·W + |set(colInd)|·J + I1·J (eq. 7; I1 its rows, folded ones counted, J the
//    columns of B), and BuildBuckets (Alg. 3) halves W_max while that lowers the cost.
// The SpMM operators of the IR build their arrays from these; spmm_cell is their reference.
#include <cstdint>
#include <vector>

#include "core/matrix.hpp"

namespace sparsetune::cell {

struct Bucket {
  std::int64_t width = 1;          // W, a power of two
  std::vector<std::int64_t> row;   // rowInd: matrix row, or -1 for a padding row
  std::vector<std::int64_t> col;   // colInd [rows * W]; padding slots repeat a column of the row
  std::vector<double> val;         // [rows * W]; 0 in padding slots
  std::int64_t folded_rows = 0;    // rows that are a piece of a longer row
  std::int64_t entries = 0;        // the matrix entries it holds
  std::int64_t distinct_cols = 0;  // |set(colInd)| over those entries
  bool atomic = false;
  std::int64_t rows() const { return static_cast<std::int64_t>(row.size()); }
};

struct Partition {
  std::int64_t col_begin = 0, col_end = 0;
  std::int64_t max_width = 1;    // W_max
  std::int64_t block_slots = 1;  // 2^k
  std::vector<Bucket> buckets;   // by width, narrowest first; only non-empty ones
};

struct Cell {
  std::int64_t rows = 0, cols = 0;
  std::vector<Partition> parts;
};

// The widest bucket a row of this partition needs unfolded: the power of two >= its longest row
// (1 for an empty partition).
std::int64_t natural_width(const Csr64& a, std::int64_t col_begin, std::int64_t col_end);

// CELL of `a` with `partitions` column partitions (1 ≤ partitions ≤ max(cols, 1)); max_width[p]
// is W_max of partition p (a power of two; 0: its natural width; empty vector: all natural);
// block_factor: 2^k = block_factor · W_max (a power of two ≥ 1). Throws Error naming the field.
Cell build(const Csr64& a, int partitions, const std::vector<std::int64_t>& max_width = {},
           int block_factor = 1);

// Eq. 7 for one bucket, and summed over a partition or the matrix; `n` = J, the columns of B.
double bucket_cost(const Bucket& b, std::int64_t n);
double cost(const Partition& p, std::int64_t n);
double cost(const Cell& c, std::int64_t n);
// Eq. 7 summed over the partition of columns [col_begin, col_end) with W_max = max_width (a power
// of two) without building its arrays: equal to cost(build(...)'s partition, n).
double partition_cost(const Csr64& a, std::int64_t col_begin, std::int64_t col_end,
                      std::int64_t max_width, std::int64_t n);

// Alg. 3: W_max of each partition by the binary search over powers of two between 1 and the
// natural width, comparing the cost at mW and 2·mW; then CELL with those widths.
Cell build_tuned(const Csr64& a, int partitions, std::int64_t n, int block_factor = 1);

// C = A·B through the CELL arrays, B (cols × n) and C (rows × n) row-major.
std::vector<double> spmm_cell(const Cell& c, const std::vector<double>& b, std::int64_t n);

}  // namespace sparsetune::cell
