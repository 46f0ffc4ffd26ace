// LiteForm's predictor inputs (Tables 2 and 3) and the similarity metrics its partition
// predictor is judged by (eq. 1 and 2).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "features/matrix_features.hpp"

namespace sparsetune::features {

namespace {
// Per-row density is row length / cols, so its statistics are the row-length ones over cols.
double per_col(double v, std::int64_t cols) {
  return cols == 0 ? 0.0 : v / static_cast<double>(cols);
}

std::vector<Feature> row_density(const MatrixProfile& p, const std::string& g) {
  const auto& rl = p.row_lengths;
  return {
      {"row_density_mean", g, per_col(rl.mean(), p.cols)},
      {"row_density_min", g, per_col(static_cast<double>(rl.min()), p.cols)},
      {"row_density_max", g, per_col(static_cast<double>(rl.max()), p.cols)},
      {"row_density_std", g, per_col(rl.stddev(), p.cols)},
  };
}
}  // namespace

std::vector<Feature> liteform_cell_features(const MatrixProfile& p) {
  const std::string g(kLiteForm);
  const auto& rl = p.row_lengths;
  return {
      {"rows", g, static_cast<double>(p.rows)},
      {"cols", g, static_cast<double>(p.cols)},
      {"nnz", g, static_cast<double>(p.nnz)},
      {"row_nnz_mean", g, rl.mean()},
      {"row_nnz_min", g, static_cast<double>(rl.min())},
      {"row_nnz_max", g, static_cast<double>(rl.max())},
      {"row_nnz_std", g, rl.stddev()},
  };
}

std::vector<Feature> liteform_partition_features(const MatrixProfile& p, std::int64_t dense_cols) {
  if (dense_cols < 1)
    throw Error("the dense matrix needs at least one column, got " + std::to_string(dense_cols));
  const std::string g(kLiteForm);
  std::vector<Feature> f = {
      {"rows", g, static_cast<double>(p.rows)},
      {"cols", g, static_cast<double>(p.cols)},
      {"nnz", g, static_cast<double>(p.nnz)},
  };
  for (auto& d : row_density(p, g)) f.push_back(std::move(d));
  f.push_back({"dense_cols", g, static_cast<double>(dense_cols)});
  return f;
}

std::vector<Feature> liteform_features(const MatrixProfile& p) {
  auto f = liteform_cell_features(p);
  for (auto& d : row_density(p, std::string(kLiteForm))) f.push_back(std::move(d));
  return f;
}

std::vector<Feature> liteform_cell_features(const Csr64& a) {
  return liteform_cell_features(profile_matrix(a));
}
std::vector<Feature> liteform_partition_features(const Csr64& a, std::int64_t dense_cols) {
  return liteform_partition_features(profile_matrix(a), dense_cols);
}
std::vector<Feature> liteform_features(const Csr64& a) {
  return liteform_features(profile_matrix(a));
}

double partition_similarity(std::int64_t p, std::int64_t p_hat) {
  if (p < 0 || p_hat < 0) throw Error("partition counts cannot be negative");
  const std::int64_t m = std::max(p, p_hat);
  if (m == 0) return 1.0;
  return 1.0 - static_cast<double>(std::llabs(p - p_hat)) / static_cast<double>(m);
}

double partition_cosine_similarity(const std::vector<double>& p, const std::vector<double>& p_hat) {
  if (p.size() != p_hat.size() || p.empty())
    throw Error("cosine similarity needs two vectors of the same, non-zero length (got " +
                std::to_string(p.size()) + " and " + std::to_string(p_hat.size()) + ")");
  double dot = 0.0, a = 0.0, b = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    dot += p[i] * p_hat[i];
    a += p[i] * p[i];
    b += p_hat[i] * p_hat[i];
  }
  if (a == 0.0 || b == 0.0) return 0.0;
  return dot / (std::sqrt(a) * std::sqrt(b));
}

}  // namespace sparsetune::features
