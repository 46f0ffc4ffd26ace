#include "search/spmm_seeds.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "graph/cell_graph.hpp"
#include "graph/spmm_graph.hpp"

namespace sparsetune::search {

namespace {

// The seeds' first column tile for n: the largest power of two up to 8 that n fills (vectors
// of 4 where it is that wide); the search then tunes the tile like any other parameter.
int seed_tile(std::int64_t n) { return n >= 8 ? 8 : n >= 4 ? 4 : n >= 2 ? 2 : 1; }

}  // namespace

graph::Graph spmm_seed(const graph::Graph& g, std::int64_t n) {
  const int tn = seed_tile(n);
  graph::Graph s = graph::as_spmm(g, tn, std::min(tn, 4));
  s.name = g.name;
  return s;
}

namespace {

// Lanes over columns for n columns of B: a warp of lanes once n ≥ 32, each lane up to 8 columns
// (two or more column spans of the grid); below 32 a group of the next power of two ≥ n.
struct LaneTile {
  int lanes = 32, tn = 1, vec = 1;
};
LaneTile lane_tile(std::int64_t n) {
  LaneTile t;
  if (n >= 32)
    while (t.tn < 8 && 64 * t.tn <= n) t.tn *= 2;
  else
    for (t.lanes = 1; t.lanes < n;) t.lanes *= 2;
  t.vec = std::min(t.tn, 4);
  return t;
}

}  // namespace

graph::Graph cell_seed(const Csr64& a, std::int64_t n, int partitions) {
  const LaneTile lt = lane_tile(n);
  graph::CellGraphOptions co;
  co.partitions = partitions;
  co.tn = lt.tn;
  co.vec = lt.vec;
  co.lanes = lt.lanes;
  graph::Graph g = graph::cell_graph(a, n, co);
  g.name = "cell-p" + std::to_string(partitions);
  return g;
}

std::vector<graph::Graph> spmm_lanes_seeds(const graph::Graph& csr_vector, std::int64_t n,
                                           std::int64_t nnz) {
  const auto [lanes, tn, vec] = lane_tile(n);
  std::vector<graph::Graph> out;
  out.push_back(graph::as_spmm(csr_vector, tn, vec, lanes));
  out.back().name = "csr-vector-lanes";
  const char* warp_row = R"({"ops": [{"op": "COMPRESS"}, {"op": "BMW_ROW_BLOCK", "rows": 1},
    {"op": "BMT_ROW_BLOCK", "rows": 1}, {"op": "SET_RESOURCES", "threads": 128},
    {"op": "THREAD_TOTAL_RED"}]})";
  const char* scalar = R"({"ops": [{"op": "COMPRESS"}, {"op": "BMT_ROW_BLOCK", "rows": 1},
    {"op": "SET_RESOURCES", "threads": 128}, {"op": "THREAD_TOTAL_RED"}]})";
  const char* row = n >= 32 ? warp_row : scalar;
  out.push_back(graph::as_spmm(graph::parse_graph(row, "lanes seed"), tn, vec, lanes));
  out.back().name = n >= 32 ? "warp-row-lanes" : "csr-scalar-lanes";
  // Runs of 8 non-zeros whatever the rows: a long row no longer holds one warp for its whole
  // length (the row-per-warp kernel's straggler on skewed graphs); finished rows go out by atomics.
  const char* split = R"({"ops": [{"op": "COMPRESS"}, {"op": "BMT_NNZ_BLOCK", "nnz": 8},
    {"op": "SET_RESOURCES", "threads": 128}, {"op": "THREAD_BITMAP_RED"},
    {"op": "GMEM_ATOM_RED"}]})";
  out.push_back(graph::as_spmm(graph::parse_graph(split, "lanes seed"), tn, vec, lanes));
  out.back().name = "nnz-split-lanes";
  if (lanes == 32) {
    // The same split with a whole warp per run (a warp block of one thread block): the warp loads
    // a run's entries 32 at a time and reads each once for its 32 * tn columns, where
    // nnz-split-lanes walks 32 runs of 8 one after another with a 32-entry load for each (a
    // quarter full). Runs of 32 to 256 entries: about 16k entries per run-length step keeps a
    // few thousand warps in flight.
    std::int64_t run = 32;
    while (run < 256 && run * 16384 * 2 <= nnz) run *= 2;
    const std::string r = std::to_string(run);
    const std::string warp_split =
        R"({"ops": [{"op": "COMPRESS"}, {"op": "BMW_NNZ_BLOCK", "nnz": )" + r +
        R"(}, {"op": "BMT_NNZ_BLOCK", "nnz": )" + r +
        R"(}, {"op": "SET_RESOURCES", "threads": 128}, {"op": "THREAD_BITMAP_RED"},
      {"op": "GMEM_ATOM_RED"}]})";
    out.push_back(graph::as_spmm(graph::parse_graph(warp_split, "lanes seed"), tn, vec, lanes));
    out.back().name = "nnz-split-warp";
  }
  if (n >= 32 && n < 128) {
    // Groups of n / 4 lanes with vectors of 4, a row each: a warp has 32 / (n / 4) rows in
    // flight where warp-row-lanes has one (landmark at n = 32: rows of 16 entries, 4-byte loads).
    int g = 8;
    while (g * 2 * 4 <= n) g *= 2;
    out.push_back(graph::as_spmm(graph::parse_graph(scalar, "lanes seed"), 4, 4, g));
    out.back().name = "csr-scalar-lanes";
  }
  return out;
}

graph::Graph row_order_kernel(const graph::Graph& csr_vector, std::int64_t n) {
  // By name, not position: the seeds' list grows with the shapes the search starts from.
  const std::string want = n >= 32 ? "warp-row-lanes" : "csr-vector-lanes";
  for (auto& g : spmm_lanes_seeds(csr_vector, n))
    if (g.name == want) return std::move(g);
  throw Error("row_order_kernel: no " + want + " seed");
}

bool b_outgrows_cache(std::int64_t cols, std::int64_t n) {
  return cols * n * 4 >= kBOutgrowsCacheBytes;
}

bool seeds_shared_line_order(std::int64_t cols, std::int64_t nnz, std::int64_t n) {
  return b_outgrows_cache(cols, n) && nnz <= kSharedLineOrderMaxNnz;
}

SpmmSeeds spmm_seeds(const std::vector<graph::Graph>& known, const graph::Graph& csr_vector,
                     const Csr64& a, std::int64_t n, std::int64_t longest) {
  SpmmSeeds out;
  std::vector<graph::Graph>& tiled = out.seeds;
  for (const auto& g : known) {
    try {
      tiled.push_back(spmm_seed(g, n));
    } catch (const graph::GraphError&) {  // an operator that does not serve SpMM
    }
  }
  // CELL with Alg. 3's bucket widths, over one, two and four column partitions.
  for (int p = 1; p <= std::min<std::int64_t>(4, a.cols); p *= 2)
    tiled.push_back(cell_seed(a, n, p));
  // Lanes over columns: a B row segment read coalesced by a warp, A read once per column span.
  for (auto& g : spmm_lanes_seeds(csr_vector, n, a.nnz())) tiled.push_back(std::move(g));
  out.row_kernel = row_order_kernel(csr_vector, n);
  // SpMM's baseline, measured first, is the lanes kernel: csr-vector with a thread tile of
  // columns was 3-6x slower on the GPU (pubmed and landmark at N = 128), and on a large matrix
  // it was the only candidate the budget let the search measure.
  out.baseline = out.row_kernel;
  // Except where one row is far longer than the rest (Maragal_6: 5,941 entries, mean 25): a
  // warp per row then waits on that row (0.05x cuSPARSE when a small budget measured only the
  // baseline), and the non-zero split is the safe first measurement: a warp per run of entries
  // where the tile has 32 lanes (A read once per 32 * tn columns), else segmented-coo.
  if (longest >= 1024 && longest >= 32 * a.nnz() / std::max<std::int64_t>(a.rows, 1)) {
    const char* split = n >= 32 ? "nnz-split-warp" : "segmented-coo";
    for (const auto& g : tiled)
      if (g.name == split) out.baseline = g;
  }
  // The output-stationary kernel (a warp per row) under two of Mehrabi et al.'s row orders:
  // LPT balances the warps, hybrid-1 adds B-line locality among equal loads. tune puts the
  // predicted order first once the architecture is known.
  for (const int order : {4, 7}) tiled.push_back(graph::with_row_order(out.row_kernel, order));
  // Where B may outgrow the L2, CTA-aware with its candidates from shared lines: rows that read
  // the same lines of B run together. On a random geometric graph of 2^19 points at N = 128 it ran
  // 1.28x the original order and 1.5x cuSPARSE; with the matrix's order as candidates, 0.99x
  // (docs/benchmarks.md, "Row orders where B outgrows the L2").
  if (seeds_shared_line_order(a.cols, a.nnz(), n))
    tiled.push_back(graph::with_row_order(out.row_kernel, 6, row_orders::Candidates::shared_lines));
  return out;
}

}  // namespace sparsetune::search
