// AlphaSparse's matrix features: what its pruning rules and its analysis of results look at.
#include <string>

#include "features/matrix_features.hpp"

namespace sparsetune::features {

namespace {
// §I: a matrix is irregular when the variance of its row lengths exceeds 100.
constexpr double kIrregularVariance = 100.0;
}  // namespace

std::vector<Feature> alphasparse_features(const MatrixProfile& p) {
  const std::string g(kAlphaSparse);
  const auto& rl = p.row_lengths;
  const double var = rl.variance();
  return {
      {"rows", g, static_cast<double>(p.rows)},
      {"cols", g, static_cast<double>(p.cols)},
      {"nnz", g, static_cast<double>(p.nnz)},
      {"density", g, p.density()},
      {"row_nnz_mean", g, rl.mean()},
      {"row_nnz_min", g, static_cast<double>(rl.min())},
      {"row_nnz_max", g, static_cast<double>(rl.max())},
      {"row_nnz_var", g, var},
      {"empty_rows", g, static_cast<double>(rl.zeros())},
      {"irregular", g, var > kIrregularVariance ? 1.0 : 0.0},
  };
}

std::vector<Feature> alphasparse_features(const Csr64& a) {
  return alphasparse_features(profile_matrix(a));
}

}  // namespace sparsetune::features
