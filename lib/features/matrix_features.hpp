#pragma once
// The matrix feature sets of the methods sparsetune unifies, one function per predictor input, and
// matrix_features() for all of them at once (the shared row/column distributions built once).
// Formulas, sources in the papers and the choices made where a paper is silent: docs/features.md.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/matrix.hpp"
#include "features/feature.hpp"
#include "features/matrix_profile.hpp"

namespace sparsetune::features {

// AlphaSparse (SC'22) §I, §VI-B, §VII-A/C: size, row-length statistics, the row-length variance
// that defines irregularity (> 100), and empty rows.
std::vector<Feature> alphasparse_features(const Csr64& a);
std::vector<Feature> alphasparse_features(const MatrixProfile& p);

// LiteForm (HPDC'25) Table 2: the inputs of the CELL-or-not predictor, in the table's order.
std::vector<Feature> liteform_cell_features(const Csr64& a);
std::vector<Feature> liteform_cell_features(const MatrixProfile& p);

// LiteForm Table 3: the inputs of the partition-count predictor, in the table's order;
// `dense_cols` is the SpMM's N ("product of other dimensions in the kernel").
std::vector<Feature> liteform_partition_features(const Csr64& a, std::int64_t dense_cols);
std::vector<Feature> liteform_partition_features(const MatrixProfile& p, std::int64_t dense_cols);

// LiteForm's group in matrix_features(): Table 2 followed by Table 3's per-row densities (Table 3
// without N, which belongs to the operation, not the matrix).
std::vector<Feature> liteform_features(const Csr64& a);
std::vector<Feature> liteform_features(const MatrixProfile& p);

// LiteForm eq. (1): 1 - |p - p̂| / max(p, p̂) for one predicted partition count (1 when both are 0).
double partition_similarity(std::int64_t p, std::int64_t p_hat);
// LiteForm eq. (2): cosine of the angle between the partition vectors of several N (0 when either
// vector is all zero).
double partition_cosine_similarity(const std::vector<double>& p, const std::vector<double>& p_hat);

// MatXtract (TACO'26) Table 2: dimensions, then for rows and for columns mean, std, min, max,
// pRatio, TopK (k in kTopK) and HotR (R in kHotR).
inline constexpr std::int64_t kTopK[] = {1, 2, 3, 4, 5, 10, 50, 100, 200, 300};
inline constexpr std::int64_t kHotR[] = {10, 20, 30, 40, 50, 60, 70, 80, 90};
std::vector<Feature> matxtract_features(const Csr64& a);
std::vector<Feature> matxtract_features(const MatrixProfile& p);

// Row permutations (ISPASS'21) Table II: the 24 load-balance and cache-line features of the
// output-stationary SpMM kernel, row i going to warp i mod kWarpsPerCta.
inline constexpr std::int64_t kWarpsPerCta = 32;     // N_w
inline constexpr std::int64_t kThreadsPerWarp = 32;  // N_t
inline constexpr std::int64_t kLineColumns = 32;     // 128-byte line of fp32 values of B
std::vector<Feature> permutation_features(const Csr64& a);

// Every group above (LiteForm as liteform_features), in the order alphasparse, liteform,
// matxtract, permutation.
std::vector<Feature> matrix_features(const Csr64& a);

// The names of one group's features as the database and the models key them ("group.name"), in
// the order matrix_features gives them.
std::vector<std::string> feature_names(std::string_view group);

}  // namespace sparsetune::features
