#pragma once
// SpMM's seeds: the known SpMV formats with a column tile, CELL, the kernels with lanes over B's
// columns, and the warp-per-row kernel the row orders apply to. The operation is a dimension of
// the same graphs (graph/spmm_graph.hpp); these are where an SpMM search starts.
#include <cstdint>
#include <vector>

#include "core/matrix.hpp"
#include "graph/graph.hpp"

namespace sparsetune::search {

// SpMM's seed of an SpMV graph: the graph with the first column tile for n columns of B.
graph::Graph spmm_seed(const graph::Graph& g, std::int64_t n);

// SpMM's seeds with lanes over columns (COL_TILE lanes) for n columns: a warp of lanes over
// min(n, 32 * tn) columns, tn the largest power of two up to 8 that 32 * tn <= n allows (vectors
// of up to 4); below 32 columns the fewest lanes (a power of two) that cover n, one column each.
// "csr-vector-lanes": csr-vector (the warp block's 32 thread blocks walked by every group, the
// warp reduction across groups only, none at 32 lanes); "warp-row-lanes" (n >= 32): a warp per
// row with one thread block, no warp reduction; "csr-scalar-lanes" (n < 32): a group per row;
// "nnz-split-lanes": thread blocks of 8 non-zeros across rows, running row sums added by atomics;
// for n >= 32 "nnz-split-warp": runs of 32 to 256 non-zeros (more for larger nnz), a whole warp
// per run; for 32 <= n < 128 also "csr-scalar-lanes" with groups of n / 4 lanes (a power of
// two), 4 columns each in vectors of 4.
std::vector<graph::Graph> spmm_lanes_seeds(const graph::Graph& csr_vector, std::int64_t n,
                                           std::int64_t nnz = 0);
// The output-stationary kernel of Mehrabi et al. the row orders are made for and learned on: a
// warp per row with its lanes over the columns (warp-row-lanes; csr-vector-lanes below n = 32).
graph::Graph row_order_kernel(const graph::Graph& csr_vector, std::int64_t n);

// The CELL seed over `partitions` column partitions with Alg. 3's bucket widths, each bucket's
// rows walked by a group of lanes over B's columns (a B row segment read coalesced); named
// "cell-p<partitions>".
graph::Graph cell_seed(const Csr64& a, std::int64_t n, int partitions);

// B of at least this many bytes (32 MiB: over half an H100's or H200's L2) competes with A's
// stream for the cache, and an order that runs rows reading the same lines of B together pays.
constexpr std::int64_t kBOutgrowsCacheBytes = std::int64_t(32) << 20;
// Whether B (cols x n at 4 bytes a value, as f32 stores it) is that big.
bool b_outgrows_cache(std::int64_t cols, std::int64_t n);
// CTA-aware over shared lines costs about 5 s of host time at 16M entries (docs/benchmarks.md):
// past 2^25 entries the order would take a large share of a search's budget before it is timed.
constexpr std::int64_t kSharedLineOrderMaxNnz = std::int64_t(1) << 25;
// Whether spmm_seeds adds that order: B outgrows the cache and A has at most that many entries.
bool seeds_shared_line_order(std::int64_t cols, std::int64_t nnz, std::int64_t n);

struct SpmmSeeds {
  std::vector<graph::Graph> seeds;  // what the search starts from
  graph::Graph baseline;            // measured first
  graph::Graph row_kernel;          // the warp-per-row kernel (row_order_kernel)
};

// The seeds of an SpMM search of `a` at n columns: each known SpMV graph with its first column
// tile (those that cannot serve SpMM left out), CELL over 1, 2 and 4 column partitions, the lanes
// seeds, and the row-order kernel under LPT and Hybrid-1, and under CTA-aware with candidates from
// shared lines where B outgrows the cache (seeds_shared_line_order). The baseline is the row-order
// kernel, or the non-zero split where the longest row (`longest`) is 1024 entries or more and 32
// times the mean.
SpmmSeeds spmm_seeds(const std::vector<graph::Graph>& known, const graph::Graph& csr_vector,
                     const Csr64& a, std::int64_t n, std::int64_t longest);

}  // namespace sparsetune::search
