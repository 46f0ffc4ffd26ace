// MatXtract's Table 2: skew statistics of the row and the column length distributions, the
// inputs of its crux (τc, τr) predictor.
#include <algorithm>
#include <string>

#include "features/matrix_features.hpp"

namespace sparsetune::features {

namespace {
void add_side(std::vector<Feature>& f, const LengthHistogram& h, const std::string& side,
              const std::string& g) {
  const double mu = h.mean();
  f.push_back({side + "_nnz_mean", g, mu});
  f.push_back({side + "_nnz_std", g, h.stddev()});
  f.push_back({side + "_nnz_min", g, static_cast<double>(h.min())});
  f.push_back({side + "_nnz_max", g, static_cast<double>(h.max())});
  // max / min is unbounded with an empty row; an empty row counts as length 1 here.
  f.push_back(
      {side + "_pratio", g,
       static_cast<double>(h.max()) / static_cast<double>(std::max<std::int64_t>(h.min(), 1))});
  for (auto k : kTopK)
    f.push_back({side + "_top" + std::to_string(k), g,
                 mu == 0.0 ? 0.0 : static_cast<double>(h.kth_largest(k)) / mu});
  for (auto r : kHotR)
    f.push_back({side + "_hot" + std::to_string(r), g,
                 h.items() == 0 ? 0.0
                                : static_cast<double>(h.items_to_cover(r, 100)) /
                                      static_cast<double>(h.items())});
}
}  // namespace

std::vector<Feature> matxtract_features(const MatrixProfile& p) {
  const std::string g(kMatXtract);
  std::vector<Feature> f = {
      {"rows", g, static_cast<double>(p.rows)},
      {"cols", g, static_cast<double>(p.cols)},
      {"nnz", g, static_cast<double>(p.nnz)},
  };
  add_side(f, p.row_lengths, "row", g);
  add_side(f, p.col_lengths, "col", g);
  return f;
}

std::vector<Feature> matxtract_features(const Csr64& a) {
  return matxtract_features(profile_matrix(a));
}

}  // namespace sparsetune::features
