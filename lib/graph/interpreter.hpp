#pragma once
// The CPU interpreter: walks a Format the way its kernels do (same BMTB, warp and thread loops,
// same arrays through the same formulas, the same reduction structure, lane by lane), so every
// graph can be checked against the fp64 reference without a GPU.
#include <cstdint>
#include <vector>

#include "graph/format.hpp"

namespace sparsetune::graph {

// y = A·x computed by walking every part. Throws Error when the format is inconsistent (an index
// out of range), never reads outside an array. Like the kernels, a store-only format starts from
// a y of NaNs and assigns each result (a row it misses stays NaN, a row written twice keeps only
// the last value); otherwise y starts at zero and results add up.
std::vector<double> interpret(const Format& f, const std::vector<double>& x);

// y = alpha A·x + beta y the way the kernels compute it (cuSPARSE's convention): a store-only
// format stores alpha·v + beta·y[r] per row (beta = 0 never reads y, so NaN there is harmless);
// an adding format first sets y = beta y (zeros when beta = 0), then adds alpha·v per result.
// `y` must hold the matrix's rows.
void interpret(const Format& f, const std::vector<double>& x, double alpha, double beta,
               std::vector<double>& y);

// SpMM (op "spmm"): C = alpha A·B + beta C with B (cols x n) and C (rows x n) in the format's
// layout: row-major with row strides ldb and ldc (ldb, ldc >= n), or, for Format::layout "col",
// column-major with column strides ldb >= cols and ldc >= rows (both at least 1). The same
// conventions as the SpMV form above hold. A
// thread's C tile is tn independent accumulators that each follow the SpMV fragment's order of
// additions for their column, so the walk runs once per column of B; columns at and beyond n are
// neither read nor written, as the kernels mask them.
void interpret_spmm(const Format& f, const std::vector<double>& b, std::int64_t n, std::int64_t ldb,
                    double alpha, double beta, std::vector<double>& c, std::int64_t ldc);
// C = A·B packed in the format's layout (row-major ldb = ldc = n; column-major ldb = cols,
// ldc = rows); like interpret() above, a store-only format starts from NaNs.
std::vector<double> interpret_spmm(const Format& f, const std::vector<double>& b, std::int64_t n);

// How many times part `part` writes each row of y (the length is the matrix's rows).
std::vector<std::int64_t> count_writes(const Format& f, std::size_t part);

// Whether no part uses atomics and every row of y is written exactly once over all parts: the
// condition for Format::store_only.
bool writes_each_row_once(const Format& f);
// Whether part `part` alone, without atomics, writes every row of y exactly once: the condition
// for Format::storing_part.
bool writes_each_row_once(const Format& f, std::size_t part);

}  // namespace sparsetune::graph
