// Every shared matrix small enough to read quickly: all features finite, consistent across
// groups, and equal to the direct transcriptions of the definitions. Every shared tensor: finite
// features, slices that add up to the whole.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>

#include "core/convert.hpp"
#include "core/error.hpp"
#include "features/matrix_features.hpp"
#include "features/tensor_features.hpp"
#include "io/matrix_file.hpp"
#include "io/tns.hpp"
#include "naive_features.hpp"

using namespace sparsetune;
using namespace sparsetune::features;
using Catch::Detail::Approx;

namespace {
// The large ones (G3_circuit, landmark, Maragal_6) are benchmarks, not tests.
constexpr std::uintmax_t kMaxGzipBytes = 1u << 20;

std::vector<double> lengths_of(const Csr64& a) {
  std::vector<double> v(a.rows);
  for (std::int64_t r = 0; r < a.rows; ++r) v[r] = static_cast<double>(a.row_length(r));
  return v;
}
}  // namespace

TEST_CASE("features of the shared matrices", "[features][shared]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(SPARSETUNE_SHARED_DIR) / "matrices";
  REQUIRE(fs::is_directory(dir));
  int checked = 0, refused = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const auto name = entry.path().filename().string();
    if (name.find(".mtx") == std::string::npos || entry.file_size() > kMaxGzipBytes) continue;
    Csr64 a;
    try {
      a = io::read_matrix(entry.path().string());
    } catch (const Error&) {
      ++refused;  // complex matrices are refused by design
      continue;
    }
    INFO(name);
    const auto f = matrix_features(a);
    REQUIRE(f.size() == 96);
    for (const auto& x : f) {
      INFO(x.group << "." << x.name);
      CHECK(std::isfinite(x.value));
      CHECK(x.value >= 0);
    }
    // Groups agree with each other and with the matrix.
    for (auto g : {kAlphaSparse, kLiteForm, kMatXtract})
      CHECK(feature_value(f, "nnz", g) == static_cast<double>(a.nnz()));
    CHECK(std::sqrt(feature_value(f, "row_nnz_var", "alphasparse")) ==
          Approx(feature_value(f, "row_nnz_std", "matxtract")));
    CHECK(feature_value(f, "row_nnz_std", "liteform") ==
          Approx(feature_value(f, "row_nnz_std", "matxtract")));
    CHECK(feature_value(f, "nnz_per_row_max", "permutation") ==
          feature_value(f, "row_nnz_max", "alphasparse"));
    // Direct transcriptions.
    const auto lens = lengths_of(a);
    double var = 0;
    const double mean = static_cast<double>(a.nnz()) / static_cast<double>(a.rows);
    for (auto l : lens) var += (l - mean) * (l - mean);
    CHECK(feature_value(f, "row_nnz_var", "alphasparse") ==
          Approx(var / static_cast<double>(a.rows)));
    std::vector<std::int64_t> row_len(a.rows), col_len(a.cols, 0);
    for (std::int64_t r = 0; r < a.rows; ++r) row_len[r] = a.row_length(r);
    for (auto c : a.col_idx) ++col_len[c];
    auto skew = test::naive_skew(row_len, "row");
    skew.merge(test::naive_skew(col_len, "col"));
    for (const auto& [key, value] : skew) {
      INFO(key);
      CHECK(feature_value(f, key, "matxtract") == Approx(value));
    }
    for (const auto& [key, value] : test::naive_permutation_features(a)) {
      INFO(key);
      CHECK(feature_value(f, key, "permutation") == Approx(value));
    }
    ++checked;
  }
  CHECK(checked >= 30);
  CHECK(refused <= 3);
}

TEST_CASE("features of the shared tensors", "[features][shared]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(SPARSETUNE_SHARED_DIR) / "tensors";
  REQUIRE(fs::is_directory(dir));
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const auto name = entry.path().filename().string();
    if (name.find(".tns") == std::string::npos) continue;
    INFO(name);
    const SparseTensor t = io::read_tns(entry.path().string());
    for (const auto& x : tensor_features(t)) CHECK(std::isfinite(x.value));
    CHECK(feature_value(tensor_features(t), "nnz") == static_cast<double>(t.nnz()));
    // Slices along every mode partition the entries, and none has a longer row than the whole.
    for (int mode = 0; mode < t.order(); ++mode) {
      const auto whole = tensor_features(t, default_column_mode(t.order(), mode));
      double entries = 0;
      for (const auto& s : slice_features(t, mode)) {
        entries += feature_value(s.features, "nnz");
        CHECK(feature_value(s.features, "row_nnz_max") <= feature_value(whole, "row_nnz_max"));
        for (const auto& x : s.features) CHECK(std::isfinite(x.value));
      }
      CHECK(entries == static_cast<double>(t.nnz()));
    }
    ++checked;
  }
  CHECK(checked >= 5);
}
