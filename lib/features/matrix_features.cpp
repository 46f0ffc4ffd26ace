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

}  // namespace sparsetune::features
