#include "features/matrix_features.hpp"

namespace sparsetune::features {

std::vector<Feature> matrix_features(const Csr64& a) {
  const MatrixProfile p = profile_matrix(a);  // one pass over the rows, one over the columns
  std::vector<Feature> f = alphasparse_features(p);
  for (auto& x : liteform_features(p)) f.push_back(std::move(x));
  for (auto& x : matxtract_features(p)) f.push_back(std::move(x));
  for (auto& x : permutation_features(a)) f.push_back(std::move(x));  // its own pass over col_idx
  return f;
}

std::vector<std::string> feature_names(std::string_view group) {
  Csr64 one;  // a 1 x 1 matrix: the feature list, not its values
  one.rows = one.cols = 1;
  one.row_ptr = {0, 1};
  one.col_idx = {0};
  one.val = {1.0};
  std::vector<std::string> names;
  for (const auto& f : matrix_features(one))
    if (f.group == group) names.push_back(feature_key(f));
  return names;
}

}  // namespace sparsetune::features
