#include "features/tensor_features.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "core/error.hpp"

namespace sparsetune::features {

namespace {
void check_mode(const SparseTensor& t, int mode, const char* what) {
  if (mode < 0 || mode >= t.order())
    throw Error(std::string(what) + " " + std::to_string(mode) + " out of range for an order-" +
                std::to_string(t.order()) + " tensor");
}

// Sorts entry ids lexicographically by the given modes.
void sort_ids(std::vector<std::int64_t>& ids, const SparseTensor& t,
              const std::vector<int>& modes) {
  std::sort(ids.begin(), ids.end(), [&](std::int64_t a, std::int64_t b) {
    for (int m : modes)
      if (t.idx[m][a] != t.idx[m][b]) return t.idx[m][a] < t.idx[m][b];
    return false;
  });
}

bool same_on(const SparseTensor& t, const std::vector<int>& modes, std::int64_t a, std::int64_t b) {
  for (int m : modes)
    if (t.idx[m][a] != t.idx[m][b]) return false;
  return true;
}

// The 9 features of the entries ids[begin, end), which are sorted by `row_modes`.
// `col_buf` is scratch space for the column indices.
std::vector<Feature> view_features(const SparseTensor& t, const std::vector<std::int64_t>& ids,
                                   std::int64_t begin, std::int64_t end,
                                   const std::vector<int>& row_modes, int col_mode,
                                   std::vector<std::int64_t>& col_buf) {
  const std::string g(kIapSptv);
  double rows = 1.0;  // a product of dimensions may pass 2^63; as a count it is only a feature
  for (int m : row_modes) rows *= static_cast<double>(t.dims[m]);
  const double cols = static_cast<double>(t.dims[col_mode]);
  const std::int64_t nnz = end - begin;

  // Runs of equal row (resp. column) index: the non-empty rows (columns) and their lengths.
  auto runs = [](std::int64_t n, auto same_as_previous, std::int64_t& count, std::int64_t& min_len,
                 std::int64_t& max_len) {
    count = 0;
    min_len = 0;
    max_len = 0;
    std::int64_t len = 0;
    for (std::int64_t k = 0; k <= n; ++k) {
      if (k < n && k > 0 && same_as_previous(k)) {
        ++len;
        continue;
      }
      if (k > 0) {
        min_len = count == 0 ? len : std::min(min_len, len);
        max_len = std::max(max_len, len);
        ++count;
      }
      len = 1;
    }
  };
  std::int64_t row_count, row_min, row_max;
  runs(
      nnz,
      [&](std::int64_t k) { return same_on(t, row_modes, ids[begin + k], ids[begin + k - 1]); },
      row_count, row_min, row_max);
  col_buf.resize(nnz);
  for (std::int64_t k = 0; k < nnz; ++k) col_buf[k] = t.idx[col_mode][ids[begin + k]];
  std::sort(col_buf.begin(), col_buf.end());
  std::int64_t col_count, col_min, col_max;
  runs(
      nnz, [&](std::int64_t k) { return col_buf[k] == col_buf[k - 1]; }, col_count, col_min,
      col_max);

  // An empty row (column) anywhere makes the minimum 0.
  if (static_cast<double>(row_count) < rows) row_min = 0;
  if (static_cast<double>(col_count) < cols) col_min = 0;
  const double n = static_cast<double>(nnz);
  return {
      {"rows", g, rows},
      {"cols", g, cols},
      {"nnz", g, n},
      {"row_nnz_mean", g, rows == 0.0 ? 0.0 : n / rows},
      {"row_nnz_max", g, static_cast<double>(row_max)},
      {"row_nnz_min", g, static_cast<double>(row_min)},
      {"col_nnz_mean", g, cols == 0.0 ? 0.0 : n / cols},
      {"col_nnz_max", g, static_cast<double>(col_max)},
      {"col_nnz_min", g, static_cast<double>(col_min)},
  };
}
}  // namespace

int default_column_mode(int order, int slice_mode) {
  return slice_mode == order - 1 ? order - 2 : order - 1;
}

void check_tensor(const SparseTensor& t) {
  if (t.order() < 1) throw Error("tensor has no modes");
  if (static_cast<int>(t.idx.size()) != t.order())
    throw Error("tensor has " + std::to_string(t.idx.size()) + " index arrays for " +
                std::to_string(t.order()) + " modes");
  for (int m = 0; m < t.order(); ++m) {
    if (t.dims[m] < 0) throw Error("mode " + std::to_string(m) + " has a negative size");
    if (static_cast<std::int64_t>(t.idx[m].size()) != t.nnz())
      throw Error("mode " + std::to_string(m) + " has " + std::to_string(t.idx[m].size()) +
                  " indices for " + std::to_string(t.nnz()) + " values");
    for (auto i : t.idx[m])
      if (i < 0 || i >= t.dims[m])
        throw Error("index " + std::to_string(i) + " outside mode " + std::to_string(m) +
                    " of size " + std::to_string(t.dims[m]));
  }
}

std::vector<Feature> tensor_features(const SparseTensor& t, int col_mode) {
  check_tensor(t);
  if (col_mode == -1) col_mode = default_column_mode(t.order());
  check_mode(t, col_mode, "column mode");
  std::vector<int> row_modes;
  for (int m = 0; m < t.order(); ++m)
    if (m != col_mode) row_modes.push_back(m);
  std::vector<std::int64_t> ids(t.nnz());
  std::iota(ids.begin(), ids.end(), 0);
  sort_ids(ids, t, row_modes);
  std::vector<std::int64_t> col_buf;
  return view_features(t, ids, 0, t.nnz(), row_modes, col_mode, col_buf);
}

std::vector<SliceFeatures> slice_features(const SparseTensor& t, int mode, int col_mode) {
  check_tensor(t);
  check_mode(t, mode, "slice mode");
  if (t.order() < 2) throw Error("slices need a tensor of order 2 or more");
  if (col_mode == -1) col_mode = default_column_mode(t.order(), mode);
  check_mode(t, col_mode, "column mode");
  if (col_mode == mode) throw Error("the column mode must differ from the slice mode");
  std::vector<int> row_modes, order{mode};
  for (int m = 0; m < t.order(); ++m)
    if (m != mode && m != col_mode) row_modes.push_back(m);
  order.insert(order.end(), row_modes.begin(), row_modes.end());

  std::vector<std::int64_t> ids(t.nnz());
  std::iota(ids.begin(), ids.end(), 0);
  sort_ids(ids, t, order);  // slices contiguous, rows contiguous inside each
  std::vector<SliceFeatures> out;
  std::vector<std::int64_t> col_buf;
  const auto& key = t.idx[mode];
  for (std::int64_t b = 0; b < t.nnz();) {
    std::int64_t e = b + 1;
    while (e < t.nnz() && key[ids[e]] == key[ids[b]]) ++e;
    out.push_back({key[ids[b]], view_features(t, ids, b, e, row_modes, col_mode, col_buf)});
    b = e;
  }
  return out;
}

}  // namespace sparsetune::features
