// LiteForm's CELL format (core/cell.hpp): buckets, folding, blocks and the cost model worked out
// by hand, the bucket-width search on the same matrix, and random matrices, partitions and widths
// multiplied through the CELL arrays against the fp64 SpMM reference.
#include "core/cell.hpp"

#include <catch2/catch.hpp>
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
      c.val.push_back(1.0 + static_cast<double>(r) + 0.1 * static_cast<double>(col));
    }
  std::int64_t dup = 0;
  return coo_to_csr<std::int64_t, std::int64_t>(c, &dup);
}

// Rows of 5, 1, 2 and 3 entries.
Csr64 hand() { return from_rows(8, {{0, 1, 2, 3, 4}, {1}, {2, 3}, {0, 5, 6}}); }

}  // namespace

TEST_CASE("CELL by hand: buckets by row length, blocks, folding, and the cost of eq. 7",
          "[core][cell]") {
  const auto a = hand();
  auto c = cell::build(a, 1);
  REQUIRE(c.parts.size() == 1);
  const auto& p = c.parts[0];
  CHECK(p.max_width == 8);  // the 5-entry row needs 8
  CHECK(p.block_slots == 8);
  REQUIRE(p.buckets.size() == 4);
  // Width 1: row 1 and 7 padding rows (8 slots a block); width 2: row 2 and 3; width 4: row 3
  // and 1; width 8: row 0.
  CHECK(p.buckets[0].width == 1);
  CHECK(p.buckets[0].row == std::vector<std::int64_t>{1, -1, -1, -1, -1, -1, -1, -1});
  CHECK(p.buckets[1].row == std::vector<std::int64_t>{2, -1, -1, -1});
  CHECK(p.buckets[2].row == std::vector<std::int64_t>{3, -1});
  CHECK(p.buckets[2].col == std::vector<std::int64_t>{0, 5, 6, 6, 0, 0, 0, 0});
  CHECK(p.buckets[2].val[3] == 0.0);
  CHECK(p.buckets[3].row == std::vector<std::int64_t>{0});
  CHECK(p.buckets[3].atomic);  // the widest bucket
  CHECK_FALSE(p.buckets[0].atomic);
  // Eq. 7 with J = 2: 2·I1·W + |cols|·J + I1·J = 6 + 10 + 16 + 28.
  CHECK(cell::bucket_cost(p.buckets[2], 2) == Approx(16));
  CHECK(cell::cost(c, 2) == Approx(60));

  // W_max = 4: the 5-entry row folds into two rows of the width-4 bucket, both row 0.
  c = cell::build(a, 1, {4});
  const auto& b4 = c.parts[0].buckets.back();
  CHECK(b4.width == 4);
  CHECK(b4.row == std::vector<std::int64_t>{0, 0, 3});
  CHECK(b4.folded_rows == 2);
  CHECK(b4.col == std::vector<std::int64_t>{0, 1, 2, 3, 4, 4, 4, 4, 0, 5, 6, 6});
  CHECK(cell::cost(c, 2) == Approx(60));  // 6 + 10 + (24 + 14 + 6)

  // Alg. 3 from W_max = 8: cost(4) = 60 is not above cost(8) = 60, so left; cost(2) = 56 is not
  // above cost(4); cost(1) = 58 is above cost(2): W_max = 2, cost 56.
  c = cell::build_tuned(a, 1, 2);
  CHECK(c.parts[0].max_width == 2);
  CHECK(cell::cost(c, 2) == Approx(56));

  // Two partitions of 4 columns: every bucket adds atomically.
  c = cell::build(a, 2);
  CHECK(c.parts[0].col_end == 4);
  CHECK(c.parts[1].col_begin == 4);
  for (const auto& part : c.parts)
    for (const auto& b : part.buckets) CHECK(b.atomic);

  CHECK_THROWS_WITH(cell::build(a, 0), Catch::Contains("partitions = 0"));
  CHECK_THROWS_WITH(cell::build(a, 9), Catch::Contains("partitions = 9"));
  CHECK_THROWS_WITH(cell::build(a, 1, {3}), Catch::Contains("max_width[0] = 3"));
  CHECK_THROWS_WITH(cell::build(a, 2, {4}), Catch::Contains("1 widths for 2 partitions"));
  CHECK_THROWS_WITH(cell::build(a, 1, {}, 3), Catch::Contains("block_factor = 3"));
  CHECK_THROWS_AS(cell::spmm_cell(cell::build(a, 1), std::vector<double>(5), 1), Error);
}

TEST_CASE("random CELL configurations multiply like the reference and keep the format's rules",
          "[core][cell]") {
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> u(0, 1);
  int configs = 0;
  for (int t = 0; t < 240; ++t) {
    const std::int64_t rows = std::uniform_int_distribution<std::int64_t>(0, 60)(rng);
    const std::int64_t cols = std::uniform_int_distribution<std::int64_t>(1, 50)(rng);
    std::vector<std::vector<std::int64_t>> pat(rows);
    for (auto& r : pat) {
      const double d = u(rng) < 0.1 ? 0.9 : (u(rng) < 0.2 ? 0.0 : 0.08);  // long and empty rows
      for (std::int64_t c = 0; c < cols; ++c)
        if (u(rng) < d) r.push_back(c);
    }
    const Csr64 a = from_rows(cols, pat);
    const int parts = static_cast<int>(
        std::uniform_int_distribution<std::int64_t>(1, std::min<std::int64_t>(cols, 6))(rng));
    std::vector<std::int64_t> widths(parts);
    for (auto& w : widths)
      w = u(rng) < 0.3 ? 0 : std::int64_t{1} << std::uniform_int_distribution<int>(0, 4)(rng);
    const int factor = 1 << std::uniform_int_distribution<int>(0, 2)(rng);
    const std::int64_t n = std::vector<std::int64_t>{1, 3, 8}[t % 3];
    INFO("trial " << t << ": " << rows << " x " << cols << ", " << parts << " partitions, n " << n);
    const bool tuned = t % 4 == 0;
    const auto c =
        tuned ? cell::build_tuned(a, parts, n, factor) : cell::build(a, parts, widths, factor);

    std::int64_t entries = 0;
    for (const auto& p : c.parts) {
      REQUIRE(p.max_width > 0);
      REQUIRE((p.max_width & (p.max_width - 1)) == 0);
      if (tuned) REQUIRE(p.max_width <= cell::natural_width(a, p.col_begin, p.col_end));
      // The counted cost Alg. 3 searches with is the built partition's.
      REQUIRE(cell::partition_cost(a, p.col_begin, p.col_end, p.max_width, n) ==
              Approx(cell::cost(p, n)));
      for (const auto& b : p.buckets) {
        entries += b.entries;
        REQUIRE(b.col.size() == static_cast<std::size_t>(b.rows() * b.width));
        REQUIRE(b.rows() % (p.block_slots / b.width) == 0);  // whole blocks
        REQUIRE(b.atomic == (parts > 1 || b.width == p.max_width));
        if (b.width < p.max_width) REQUIRE(b.folded_rows == 0);
        for (std::int64_t i = 0; i < b.rows(); ++i) {
          std::int64_t real = 0;
          for (std::int64_t j = 0; j < b.width; ++j) {
            const auto col = b.col[i * b.width + j];
            REQUIRE((col >= p.col_begin && col < p.col_end));
            real += b.val[i * b.width + j] != 0.0;
          }
          if (b.row[i] < 0) REQUIRE(real == 0);
          // Unfolded rows of a narrower bucket have more than half its width.
          else if (b.width < p.max_width)
            REQUIRE(2 * real > b.width);
        }
      }
    }
    REQUIRE(entries == a.nnz());
    std::vector<double> bm(cols * n);
    for (auto& v : bm) v = u(rng) * 2 - 1;
    const auto ref = spmm_reference(a, bm, n);
    const auto got = cell::spmm_cell(c, bm, n);
    for (std::size_t i = 0; i < ref.size(); ++i) REQUIRE(got[i] == Approx(ref[i]).margin(1e-12));
    ++configs;
  }
  CHECK(configs >= 200);
}
