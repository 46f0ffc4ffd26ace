#pragma once
// The Matrix Metadata Set: the state of one matrix as operators convert it. A DIV operator
// branches it into parts; every part holds its rows (before COMPRESS) or its non-zero stream
// (after), and the blocks that the mapping operators cut at each parallelism level.
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/matrix.hpp"
#include "graph/arrays.hpp"

namespace sparsetune::graph {

// Parallelism levels: a block mapped to a thread block, a warp, a thread.
enum class Level { BMTB = 0, BMW = 1, BMT = 2 };
constexpr int kLevels = 3;
const char* level_name(Level l);

// One stored entry. `row` is a local row of the part (an index into origin_row).
struct Entry {
  std::int64_t row = 0;
  std::int64_t col = 0;
  double val = 0.0;
};

// A block of one level. Before a thread level is interleaved, blocks are contiguous ranges
// [begin, end) of the non-zero stream; a thread block addresses its entries as
// first + k * stride for k < size. row_lo..row_hi are the local rows the block covers (rows it
// was assigned, empty ones included, and the rows of its entries); row_lo = -1 when none.
struct Block {
  std::int64_t begin = 0, end = 0;
  std::int64_t first = 0, stride = 1, size = 0;
  std::int64_t row_lo = -1, row_hi = -1;
  std::int64_t parent = -1;  // index in the nearest defined coarser level; -1 for the part
};

// Rows grouped into slices (a tensor's matrix view, see core/sptv_matrix.hpp): the slice of each
// matrix row. Shared by every part of one design; SLICE_DIV reads it.
struct RowSlices {
  std::vector<std::int64_t> of_row;  // matrix row -> slice
  std::int64_t count = 0;            // slices, empty ones included
};

struct Part {
  std::string path;  // branch path in the graph: "" for the root, "0", "1.0", ...
  std::int64_t cols = 0;
  std::vector<std::int64_t> origin_row;  // local row -> row of the matrix (y index)
  // Before COMPRESS: the (col, val) entries of each local row, columns ascending.
  std::vector<std::vector<std::pair<std::int64_t, double>>> row_entries;
  // Or, while `in` is set, rows still read in place from the matrix (a heap list per row costs
  // more than SLICE_DIV, HYB_SPLIT and COMPRESS do): local row r holds entries
  // [in_lo[r], in_hi[r]) of `in`. The Designer copies them into row_entries before any other
  // operator runs (copy_out_rows).
  const Csr64* in = nullptr;
  std::vector<std::int64_t> in_lo, in_hi;
  bool compressed = false;
  std::vector<Entry> nz;  // after COMPRESS: storage order, padding included
  std::array<std::vector<Block>, kLevels> blocks;
  std::array<bool, kLevels> defined{false, false, false};  // cut by an operator (not implied)
  bool bmt_strided = false;                                // thread blocks are not contiguous
  // BMTB_COL_SORT: a block's entries are in column order, so its first entry's row, not its
  // lowest, starts a thread's running row (bmt_row, nz_row_delta).
  bool col_sorted = false;
  int threads = 128;              // threads per CUDA block
  int col_tile = 1, col_vec = 1;  // SpMM: columns per thread and B load width (COL_TILE)
  int col_lanes = 1;  // SpMM: lanes sharing each thread block's entries, over columns (COL_TILE)
  std::int64_t max_blocks = std::int64_t{1} << 20;  // grid cap (grid-stride loop beyond)
  std::vector<std::string> reductions;              // implementing operators, in order
  std::int64_t shmem_rows_limit = 4096;
  int thread_loads = 1;                 // entries a thread loads together (THREAD_*_RED's `loads`)
  std::int64_t max_stored = INT64_MAX;  // entries padding may grow the part to (DesignOptions)

  // Arrays an operator builds whole (TC_COMPRESS's dense unfolding), and its TC block width.
  std::map<Arr, std::vector<std::int64_t>> built;
  int tc_width = 0;

  std::int64_t pad_entries = 0;             // stored zeros added by operators
  std::shared_ptr<const RowSlices> slices;  // null unless the matrix is a tensor's view

  std::int64_t rows() const { return static_cast<std::int64_t>(origin_row.size()); }
};

struct MetadataSet {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  std::vector<Part> parts;  // leaves of the graph, in depth-first order
};

// The nearest defined level coarser than `l`, or -1 for the part itself.
int defined_parent(const Part& p, Level l);

// A parent range for cutting blocks: the part itself or one block of a coarser level.
struct Span {
  std::int64_t begin = 0, end = 0, row_lo = -1, row_hi = -1;
};
// The spans that blocks of level `l` are cut from, with the index of each as parent.
std::vector<Span> parent_spans(const Part& p, Level l);

// Recomputes the ranges of coarser defined levels from the finest defined level, after entries
// were inserted or moved.
void refresh_ranges(Part& p);

// Fills row_entries from the rows read in place (`in`) and clears `in`; no-op without it.
void copy_out_rows(Part& p);

// Extends a block's rows by `row`.
inline void cover_row(Block& b, std::int64_t row) {
  if (b.row_lo < 0 || row < b.row_lo) b.row_lo = row;
  if (row > b.row_hi) b.row_hi = row;
}

}  // namespace sparsetune::graph
