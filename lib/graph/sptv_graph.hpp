#pragma once
// HTF as an operator graph: SLICE_DIV sends every slice to the part of its format, and each part
// continues with the sub-graph that expresses that format for SpMV (configs/graphs/), so slice
// kernels are generated the way SpMV kernels are.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/sptv_matrix.hpp"
#include "graph/designer.hpp"
#include "graph/format.hpp"
#include "graph/graph.hpp"

namespace sparsetune::graph {

// IAP-SpTV's five slice formats, numbered as the paper's M-format labels.
enum class SliceFormat { CSR = 0, COO = 1, ELL = 2, HYB = 3, Dense = 4 };
inline constexpr int kSliceFormats = 5;
const char* slice_format_name(SliceFormat f);
std::optional<SliceFormat> slice_format_from_name(const std::string& name);

// Lanes per fiber: 1 (a thread walks its fiber) below a mean of 2 stored entries per fiber, else
// the largest power of two not above the mean, at most 32 (adaptive vector CSR: every lane of a
// group has an entry on average, and a fiber takes one to two loads per lane).
int slice_lanes(double mean_fiber);

// The sub-graph of a part holding the slices of one format, `lanes` threads per fiber (G):
//   CSR    COMPRESS > BMW_ROW_BLOCK(rows=32/G) > BMT_ROW_BLOCK(rows=1, lanes=G, interleave)
//          > THREAD_TOTAL_RED > WARP_BITMAP_RED        (vector CSR: a group of G lanes per fiber)
//          G = 32: COMPRESS > BMW_ROW_BLOCK(rows=1) > THREAD_TOTAL_RED > WARP_TOTAL_RED
//          G = 1:  COMPRESS > BMT_ROW_BLOCK(rows=1) > THREAD_TOTAL_RED
//   COO    COMPRESS > BMT_NNZ_BLOCK(nnz=4) > THREAD_BITMAP_RED > WARP_SEG_RED > GMEM_ATOM_RED
//          or, with coo_block_nnz = E > 0, in column-sorted thread blocks of whole fibers, at
//          most E entries and 4096 fibers each (x swept once a block instead of gathered at
//          random; configs/graphs/column-sorted-blocks.json): COMPRESS >
//          BMTB_ROW_BLOCK(max_nnz=E, max_rows=4096) > BMTB_COL_SORT > BMT_NNZ_BLOCK(nnz=4,
//          interleave) > SET_RESOURCES(threads=512) > THREAD_BITMAP_RED > SHMEM_OFFSET_RED
//   ELL    COMPRESS > BMW_ROW_BLOCK(rows=32/G) > BMT_ROW_BLOCK(rows=1, lanes=G)
//          > BMT_PAD(to_max, interleave) > THREAD_TOTAL_RED [> WARP_BITMAP_RED, or
//          WARP_TOTAL_RED for G = 32]   (padded per warp, column-major: each load is one
//          coalesced run of 32 slots)
//   HYB    HYB_SPLIT(width=H) [ ELL of width H, G lanes | COO tail ]; for H = 1 the ELL part
//          holds one entry a fiber, so it is cut into runs of entries instead, 4 fibers a
//          thread, their loads batched (COMPRESS > BMW_NNZ_BLOCK(nnz=128) >
//          BMT_NNZ_BLOCK(nnz=4, interleave) > SET_RESOURCES(threads=256) >
//          THREAD_BITMAP_RED(loads=4)): no padding, no stored metadata, four loads in flight a
//          thread
//   Dense  DENSE_FILL > COMPRESS > then as CSR (a GEMV: every fiber is a full row; the column
//          array and, for G = 32, the thread arrays are computed, only values stored)
std::vector<OpNode> slice_format_ops(SliceFormat f, int hyb_width = 4, int lanes = 1,
                                     int coo_block_nnz = 0);
// coo_block_nnz: 0 keeps COO's atomics; kSortedCooAuto sorts with sorted_coo_block_nnz() of the
// part's entries; a positive count sorts with that many entries a block at most.
inline constexpr int kSortedCooAuto = -1;
// A column-sorted COO part's entries per block: a thousandth of its entries, a power of two from
// 4096 to 65536. A skewed slice's long fibers spread over about a thousand blocks (several waves
// of the GPU's multiprocessors, so that no one block's entries are the tail), and each block
// still sweeps x with thousands of entries.
int sorted_coo_block_nnz(std::int64_t part_nnz);

// HYB's threshold H for the fibers of the slices marked in `hyb_slice` (one flag per index of
// the slice mode): the largest K that at least a third of those fibers reach (Bell and Garland's
// rule, also cuSPARSE's): the ELL part stays dense, and the COO tail takes what only the longer
// fibers hold. 1 when no slice is marked.
int hyb_width(const SptvMatrix& m, const std::vector<char>& hyb_slice);

// Per slice of the view: entries and fibers (empty slices hold 0), and the width of a Dense
// fiber (the size of the multiplied mode). The sub-graphs' lanes come from these.
struct SliceStats {
  std::vector<std::int64_t> nnz, fibers;
  std::int64_t width = 0;
};
SliceStats slice_stats(const SptvMatrix& m);

// Lanes for a part holding `slices` of format f: slice_lanes of the mean stored fiber (entries
// per fiber; at most H for HYB's ELL part; the width for Dense).
int part_lanes(SliceFormat f, const SliceStats& s, const std::vector<std::int64_t>& slices,
               int hyb_width);

// The graph for one format per slice (`format_of_slice` has one entry per index of the slice
// mode; empty slices may hold any format): SLICE_DIV over the formats non-empty slices use, in
// the order CSR, COO, ELL, HYB, Dense, each part's lanes from `stats`. Validated.
// `coo_block_nnz` > 0: COO slices in column-sorted thread blocks (HYB's COO tail stays atomic).
Graph sptv_graph(const std::vector<SliceFormat>& format_of_slice, const SliceStats& stats,
                 int hyb_width = 4, int coo_block_nnz = 0);

// Alg. 1's slice subsets: each format's slices cut into up to `batches` runs of consecutive
// slices holding about equal entries, every run a SLICE_DIV part of its own (one stream batch:
// its arrays, copied to the device on one stream, and its kernels) with lanes from its own slices.
// branches[f] lists the SLICE_DIV branches of format f, in order.
struct BatchedGraph {
  Graph graph;
  std::vector<std::vector<int>> branches;  // per format (kSliceFormats lists)
};
BatchedGraph sptv_batched_graph(const std::vector<SliceFormat>& format_of_slice,
                                const SliceStats& stats, int hyb_width, int batches,
                                int coo_block_nnz = 0);

// Entries of each slice of the view, empty slices included.
std::vector<std::int64_t> slice_entries(const SptvMatrix& m);

// Which slices of the matrix view hold entries.
std::vector<bool> nonempty_slices(const SptvMatrix& m);

// The design options that carry the view's slices into SLICE_DIV.
DesignOptions sptv_design_options(const SptvMatrix& m, const std::string& dtype);

// HTF's slice table (Format::sptv) for the view and one format per slice.
SptvSlices sptv_slices(const SptvMatrix& m, const std::vector<SliceFormat>& format_of_slice);

}  // namespace sparsetune::graph
