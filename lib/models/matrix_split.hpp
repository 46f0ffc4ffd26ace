#pragma once
// The train/test split of the predictors: matrices, never rows, are the unit (a matrix's
// candidates are all on one side), stratified by nnz quantile and structure family, and
// deterministic: matrices are ordered within their stratum by a seeded hash of their fingerprint,
// so the same matrices and seed give the same split on any machine. The training part is dealt
// into k folds for cross-validation, stratum by stratum. Instead of drawing it, the test part can
// be named: an earlier model's held-out matrices, kept when the database has grown.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace sparsetune::models {

struct SplitItem {
  std::string fingerprint;
  std::int64_t nnz = 0;
  std::string family;  // "": unknown
  std::string name;    // what SplitOptions::held_out names it by ("": its fingerprint)
};

struct SplitOptions {
  double test_fraction = 0.25;
  int nnz_bins = 4;  // nnz quantiles
  int folds = 5;     // cross-validation folds of the training part
  std::uint64_t seed = 1;
  // Not empty: exactly the items of these names are the test part (test_fraction unused), so
  // that a model trained on a larger database is tested on the same matrices as an earlier one.
  std::set<std::string> held_out;
  std::string held_out_from;  // where held_out's names came from, recorded in the description
};

struct MatrixSplit {
  std::vector<bool> test;            // per item: in the test part
  std::vector<int> fold;             // per item: its fold (training items), -1 for test items
  std::vector<std::string> stratum;  // per item: "nnz q<i>/<family>"
  nlohmann::json description;        // how it was drawn, and the counts per stratum
};

// Strata of two or more matrices put round(n · fraction) of them (at least one, and never all)
// into the test part; the matrices alone in their stratum are pooled in nnz order and every
// 1/fraction-th goes to the test part. With opt.held_out, the named items are the test part
// instead. The training part is dealt into the folds in either case. Throws Error on fewer than
// two matrices, a drawn split's fraction outside (0, 1), or names matching no item or every item.
MatrixSplit split_matrices(const std::vector<SplitItem>& items, const SplitOptions& opt);

// The split of matrices known by name (or fingerprint) and nnz alone (strata by nnz quantile):
// the split itself and, per matrix, whether it is held out. opt.held_out names them by that key.
struct HeldOut {
  MatrixSplit split;
  std::map<std::string, bool> test;
};
HeldOut hold_out(const std::map<std::string, std::int64_t>& nnz_of, const SplitOptions& opt);

}  // namespace sparsetune::models
