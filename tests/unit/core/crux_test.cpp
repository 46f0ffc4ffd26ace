// MatXtract's compute density extraction and hot-region encodings (core/crux.hpp): a split worked
// out by hand, both encodings of it laid out by hand, then random matrices and cruxes checked
// against the definition and the fp64 reference product.
#include "core/crux.hpp"

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "core/convert.hpp"
#include "core/error.hpp"
#include "core/reference.hpp"

using namespace sparsetune;

namespace {

Csr64 from_rows(std::int64_t cols, const std::vector<std::vector<std::int64_t>>& rows) {
  Coo64 c;
  c.rows = static_cast<std::int64_t>(rows.size());
  c.cols = cols;
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (auto col : rows[r]) {
      c.row.push_back(static_cast<std::int64_t>(r));
      c.col.push_back(col);
      c.val.push_back(1.0 + static_cast<double>(10 * r + col));  // a_rc = 1 + 10r + c
    }
  std::int64_t dup = 0;
  return coo_to_csr<std::int64_t, std::int64_t>(c, &dup);
}

// Column lengths 4, 3, 2, 1, 1; 11 entries.
Csr64 hand_matrix() { return from_rows(5, {{0, 1, 2, 3}, {0, 1}, {0, 4}, {0}, {1, 2}}); }

std::int64_t cover(double tau, std::int64_t nnz) {
  return static_cast<std::int64_t>(std::ceil(tau * static_cast<double>(nnz) - 1e-9));
}

}  // namespace

TEST_CASE("crux split by hand: columns by length, then rows by their local length",
          "[core][crux]") {
  const auto a = hand_matrix();
  // tau_c = 0.6: ceil(6.6) = 7 entries: columns 0 (4) and 1 (3). Local lengths in them: rows 0
  // and 1 hold 2, rows 2-4 one each. tau_r = 0.3: ceil(3.3) = 4: rows 0 and 1.
  auto s = crux::crux_split(a, 0.6, 0.3);
  CHECK(s.hot_cols == std::vector<std::int64_t>{0, 1});
  CHECK(s.column_cover == 7);
  CHECK(s.hot_rows == std::vector<std::int64_t>{0, 1});
  CHECK(s.hot.nnz() == 4);
  CHECK(s.hot.col_idx == std::vector<std::int64_t>{0, 1, 0, 1});
  CHECK(s.hot.val == std::vector<double>{1, 2, 11, 12});
  CHECK(s.cold.nnz() == 7);
  CHECK(s.cold.row_ptr == std::vector<std::int64_t>{0, 2, 2, 4, 5, 7});
  CHECK(s.cold.col_idx == std::vector<std::int64_t>{2, 3, 0, 4, 0, 1, 2});

  // tau_r = 0.4: ceil(4.4) = 5 entries: rows 0, 1 and the first of the one-entry rows, row 2.
  s = crux::crux_split(a, 0.6, 0.4);
  CHECK(s.hot_rows == std::vector<std::int64_t>{0, 1, 2});
  CHECK(s.hot.nnz() == 5);

  // The extremes: all cold, and all hot.
  s = crux::crux_split(a, 0.6, 0.0);
  CHECK(s.hot.nnz() == 0);
  CHECK(s.cold.nnz() == 11);
  s = crux::crux_split(a, 0.0, 0.0);
  CHECK(s.hot_cols.empty());
  s = crux::crux_split(a, 1.0, 1.0);
  CHECK(s.hot_cols.size() == 5);
  CHECK(s.hot_rows.size() == 5);
  CHECK(s.hot.nnz() == 11);
  CHECK(s.cold.nnz() == 0);

  CHECK_THROWS_AS(crux::crux_split(a, 0.3, 0.4), Error);  // tau_r > tau_c
  CHECK_THROWS_AS(crux::crux_split(a, 1.1, 0.4), Error);
  CHECK_THROWS_AS(crux::crux_split(a, 0.5, -0.1), Error);
  CHECK_THROWS_WITH(crux::crux_split(a, std::nan(""), 0.0), Catch::Contains("tau_r <= tau_c"));
}

TEST_CASE("both encodings of a hot region, laid out by hand", "[core][crux]") {
  // Hot rows 0, 1, 2 of the hand matrix in columns 0 and 1, in 2 x 2 TC blocks.
  const auto s = crux::crux_split(hand_matrix(), 0.6, 0.4);
  const crux::TcShape t{2, 2};
  const auto c = crux::tcu_compress(s, t);
  // Chunk 0 (rows 0, 1) uses columns 0, 1: one block. Chunk 1 (row 2) uses column 0 only,
  // padded with a repeat to one block; column 1 is absent from it.
  CHECK(c.chunk_block == std::vector<std::int64_t>{0, 1, 2});
  CHECK(c.block_col == std::vector<std::int64_t>{0, 1, 0, 0});
  CHECK(c.chunk_cols == std::vector<std::int64_t>{2, 1});
  CHECK(c.empty_columns == 1);

  const auto du = crux::dense_unfold(s, c);
  CHECK(du.tc_bit == std::vector<std::uint64_t>{0b1111, 0b0001});
  CHECK(du.tc_ptr == std::vector<std::int64_t>{0, 4, 5});
  CHECK(du.val == std::vector<double>{1, 2, 11, 12, 21});

  const auto se = crux::sparse_encode(s, t);
  // Chunk 0: rows of 2 entries, one 2 x 2 block. Chunk 1: row 2 (one entry, padded) and a row
  // past the end, all padding.
  CHECK(se.block_ptr == std::vector<std::int64_t>{0, 4, 8});
  CHECK(se.val == std::vector<double>{1, 2, 11, 12, 21, 0, 0, 0});
  CHECK(se.col == std::vector<std::int64_t>{0, 1, 0, 1, 0, 0, 0, 0});

  // The storage criterion with 8-byte values and 4-byte indices: dense unfolding stores
  // 2·4 + 2·(2·2/8 + 2·4 + 4) + 5·8 = 73 bytes, sparse encoding 2·4 + 5·12 = 68.
  const auto ch = crux::choose_storage(s, c, 8, 4);
  CHECK(ch.dense_unfolding_bytes == Approx(73));
  CHECK(ch.sparse_encoding_bytes == Approx(68));
  CHECK_FALSE(ch.dense_unfolding);

  const std::vector<double> x{1, -2, 3, 0.5, 4};
  const auto ref = spmv_reference(hand_matrix(), x);
  CHECK(crux::spmv_dense_unfolding(s, du, x) == ref);
  CHECK(crux::spmv_sparse_encoding(s, se, x) == ref);
  CHECK_THROWS_AS(crux::tcu_compress(s, {8, 16}), Error);  // 128 bits: more than one word
}

TEST_CASE(
    "random cruxes split by the definition, and both encodings multiply like the "
    "reference",
    "[core][crux]") {
  std::mt19937_64 rng(2026);
  const std::vector<crux::TcShape> shapes{{8, 4}, {8, 8}, {16, 4}, {1, 1}, {3, 5}};
  int configs = 0;
  for (int trial = 0; trial < 240; ++trial) {
    // Rectangular, from smaller than one TC block to several chunks, with empty rows and columns
    // and columns of very different lengths (a few dense ones).
    const std::int64_t rows = std::uniform_int_distribution<std::int64_t>(0, 90)(rng);
    const std::int64_t cols = std::uniform_int_distribution<std::int64_t>(1, 70)(rng);
    const double density = std::uniform_real_distribution<double>(0.0, 0.3)(rng);
    std::vector<std::vector<std::int64_t>> pattern(rows);
    std::uniform_real_distribution<double> u(0, 1);
    for (std::int64_t r = 0; r < rows; ++r) {
      if (u(rng) < 0.1) continue;  // an empty row
      for (std::int64_t c = 0; c < cols; ++c)
        if (u(rng) < density * (c % 7 == 0 ? 3.0 : 1.0)) pattern[r].push_back(c);
    }
    const Csr64 a = from_rows(cols, pattern);
    double tc = u(rng), tr = u(rng) * tc;
    if (trial % 10 == 0) tc = 1, tr = 1;
    if (trial % 10 == 1) tr = 0;
    if (trial % 10 == 2) tr = tc;
    const auto s = crux::crux_split(a, tc, tr);
    const std::int64_t nnz = a.nnz();
    INFO("trial " << trial << ": " << rows << " x " << cols << ", nnz " << nnz << ", crux (" << tc
                  << ", " << tr << ")");

    // Hot and cold partition the matrix: the hot entries are exactly those in hot rows and
    // columns.
    REQUIRE(s.hot.nnz() + s.cold.nnz() == nnz);
    std::vector<char> hc(cols, 0), hr(rows, 0);
    for (auto c : s.hot_cols) hc[c] = 1;
    for (auto r : s.hot_rows) hr[r] = 1;
    for (std::int64_t r = 0; r < rows; ++r)
      for (auto k = s.cold.row_ptr[r]; k < s.cold.row_ptr[r + 1]; ++k)
        REQUIRE_FALSE((hr[r] && hc[s.cold.col_idx[k]]));
    for (auto c : s.hot.col_idx) REQUIRE(hc[c]);

    // The fewest longest columns and rows that cover ⌈τ·nnz⌉ entries.
    std::vector<std::int64_t> col_len(cols, 0);
    for (auto c : a.col_idx) ++col_len[c];
    REQUIRE(s.column_cover >= cover(tc, nnz));
    if (!s.hot_cols.empty()) {
      REQUIRE(s.column_cover - col_len[s.hot_cols.back()] < cover(tc, nnz));
      for (std::size_t i = 1; i < s.hot_cols.size(); ++i)
        REQUIRE(col_len[s.hot_cols[i - 1]] >= col_len[s.hot_cols[i]]);
      std::int64_t longest_left = 0;
      for (std::int64_t c = 0; c < cols; ++c)
        if (!hc[c]) longest_left = std::max(longest_left, col_len[c]);
      REQUIRE(longest_left <= col_len[s.hot_cols.back()]);
    }
    REQUIRE(s.hot.nnz() >= cover(tr, nnz));
    if (s.hot.rows > 0) REQUIRE(s.hot.nnz() - s.hot.row_length(s.hot.rows - 1) < cover(tr, nnz));
    for (std::int64_t i = 1; i < s.hot.rows; ++i)
      REQUIRE(s.hot.row_length(i - 1) >= s.hot.row_length(i));

    for (const auto& t : shapes) {
      const auto c = crux::tcu_compress(s, t);
      const auto du = crux::dense_unfold(s, c);
      const auto se = crux::sparse_encode(s, t);
      // Every hot entry has exactly one bit, and each block's values are where its pointer says.
      std::int64_t bits = 0;
      for (std::size_t b = 0; b < du.tc_bit.size(); ++b) {
        bits += std::popcount(du.tc_bit[b]);
        REQUIRE(du.tc_ptr[b + 1] - du.tc_ptr[b] == std::popcount(du.tc_bit[b]));
      }
      REQUIRE(bits == s.hot.nnz());
      REQUIRE(du.tc_col.size() == du.tc_bit.size() * static_cast<std::size_t>(t.w));
      for (auto col : du.tc_col) REQUIRE((col >= 0 && col < cols));
      for (auto col : se.col) REQUIRE((col >= 0 && col < cols));
      // The storage criterion counts the arrays dense unfolding really has.
      const auto ch = crux::choose_storage(s, c, 8, 4);
      const double du_bytes = 4.0 * static_cast<double>(du.chunk_ptr.size() - 1) +
                              static_cast<double>(du.tc_bit.size()) * t.h * t.w / 8.0 +
                              4.0 * static_cast<double>(du.tc_col.size()) +
                              4.0 * static_cast<double>(du.tc_ptr.size() - 1) +
                              8.0 * static_cast<double>(du.val.size());
      REQUIRE(ch.dense_unfolding_bytes == Approx(du_bytes));

      std::vector<double> x(cols);
      for (auto& v : x) v = u(rng) * 2 - 1;
      const auto ref = spmv_reference(a, x);
      const auto y_du = crux::spmv_dense_unfolding(s, du, x);
      const auto y_se = crux::spmv_sparse_encoding(s, se, x);
      for (std::int64_t r = 0; r < rows; ++r) {
        REQUIRE(y_du[r] == Approx(ref[r]).margin(1e-12));
        REQUIRE(y_se[r] == Approx(ref[r]).margin(1e-12));
      }
      ++configs;
    }
  }
  CHECK(configs >= 200);
}
