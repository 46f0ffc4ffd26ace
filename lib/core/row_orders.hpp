#pragma once
// The row permutations of output-stationary CSR SpMM (Mehrabi et al., ISPASS'21, §III). The
// kernel they serve stripes rows over the N_w warps of a CTA (row i to warp i mod N_w), a warp's
// N_t threads sharing a row; a row's "warp load" is ⌈nnz / N_t⌉, and its mask has one bit per
// 128-byte line of B it reads (a block of `line` consecutive columns). Every order keeps CSR: it
// is a permutation p with row i of the reordered matrix = row p[i] of A (permute_rows), so the
// kernel writes C row p[i] in place and needs no inverse pass.
//
// The Hamming searches (warp-aware, CTA-aware and their hybrids) pick each next row among
// `window` candidates not placed yet, not the quadratic search over all rows. The candidates are
// the first rows of the matrix's order (Candidates::matrix), or first the rows that share a line
// of B with the reference row, found through the lines' row lists, then the matrix's order
// (Candidates::shared_lines): on a matrix whose rows are numbered at random, the first `window`
// rows share nothing with the reference, and only a row that shares a line can be nearer than
// |a| + |b|. Both are O(rows · window · lines per row). Shared lines are the default: over the
// row-order corpus on an H200 they made the Hamming orders 0.2-0.7 % faster on average and up to
// 1.24x on random geometric graphs at N = 128, where the matrix rule finds no near row
// (docs/benchmarks.md, "The Hamming searches' candidates over the corpus").
#include <cstdint>
#include <string>
#include <vector>

#include "core/matrix.hpp"

namespace sparsetune::row_orders {

enum class Order {
  original,    // CSR as it is
  dcsr,        // the non-empty rows, then the empty ones (the kernel visits the first part only)
  plain,       // by warp load, largest first
  flipped,     // plain, every other group of N_w rows reversed
  lpt,         // largest warp load first to the least loaded warp (each warp its share of rows)
  warp_aware,  // each row nearest (Hamming) to the row N_w places earlier, in the same warp
  cta_aware,   // each row nearest to the row just before it, in the same CTA step
  hybrid1,     // LPT, rows of equal warp load taken nearest to the warp's previous row first
  hybrid2_1,   // CTA-aware, ties by the warp load nearest the previous row's
  hybrid2_2,   // CTA-aware, ties by the distance to the row N_w places earlier
  hybrid2_3,   // warp-aware, ties by the warp load nearest the previous row's
};

// All eleven, in the order above, and their names ("original", "dcsr", ..., "hybrid2.3").
const std::vector<Order>& all_orders();
std::string name(Order o);
// The order named `s`; throws Error listing the names otherwise.
Order parse(const std::string& s);

// Where a Hamming search takes its `window` candidates from (see above).
enum class Candidates { matrix, shared_lines };
std::string name(Candidates c);  // "matrix", "shared-lines"
// The candidate rule named `s`; throws Error listing the names otherwise.
Candidates parse_candidates(const std::string& s);
// Whether order o's permutation depends on the candidate rule (the five Hamming searches).
bool uses_candidates(Order o);

struct Options {
  int warps = 32;    // N_w
  int threads = 32;  // N_t
  int line = 32;     // columns per cache line of B
  int window = 64;   // candidates of each Hamming search
  Candidates candidates = Candidates::shared_lines;
};

// The permutation (throws Error on options < 1). Matrices of 2^16 entries or more keep their
// last few permutations (by pattern and options), so asking again costs a hash of the pattern.
std::vector<std::int64_t> row_order(const Csr64& a, Order o, const Options& opt = {});
// The same, always computed (what an order's own cost is measured on), and kept for row_order.
std::vector<std::int64_t> compute_row_order(const Csr64& a, Order o, const Options& opt = {});

// Measures the orders are judged by: the largest total warp load of any warp (each warp's rows
// striped as the kernel does), and the B lines each CTA step (N_w consecutive rows) reads,
// summed over the steps.
std::int64_t max_warp_load(const Csr64& a, const std::vector<std::int64_t>& p, const Options& opt);
std::int64_t lines_per_step(const Csr64& a, const std::vector<std::int64_t>& p, const Options& opt);

// Every order of a matrix with its own cost (seconds to compute it) and the two measures above.
struct OrderReport {
  Order order;
  double seconds = 0;
  std::int64_t max_warp_load = 0, lines_per_step = 0;
};
std::vector<OrderReport> compare_orders(const Csr64& a, const Options& opt = {});

}  // namespace sparsetune::row_orders
