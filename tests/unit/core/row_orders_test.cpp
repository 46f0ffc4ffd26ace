// The row permutations of output-stationary SpMM (core/row_orders.hpp): orders worked out by
// hand for LPT, warp-aware and CTA-aware, and every order on random and degenerate matrices: a
// permutation, the same product, and the property it is named for.
#include "core/row_orders.hpp"

#include <catch2/catch.hpp>
#include <random>
#include <set>

#include "core/convert.hpp"
#include "core/error.hpp"
#include "core/permute.hpp"
#include "core/reference.hpp"

using namespace sparsetune;
namespace ro = sparsetune::row_orders;

namespace {

Csr64 from_rows(std::int64_t cols, const std::vector<std::vector<std::int64_t>>& rows) {
  Coo64 c;
  c.rows = static_cast<std::int64_t>(rows.size());
  c.cols = cols;
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (auto col : rows[r]) {
      c.row.push_back(static_cast<std::int64_t>(r));
      c.col.push_back(col);
      c.val.push_back(0.5 + static_cast<double>(r) - 0.25 * static_cast<double>(col));
    }
  std::int64_t dup = 0;
  return coo_to_csr<std::int64_t, std::int64_t>(c, &dup);
}

// Masks with one line per column: {0}, {5}, {5, 6}, {0, 1}, {0}.
Csr64 mask_matrix() { return from_rows(8, {{0}, {5}, {5, 6}, {0, 1}, {0}}); }

}  // namespace

TEST_CASE("row orders by hand: LPT, warp-aware, CTA-aware and its window", "[core][rows]") {
  // LPT, 2 warps, a thread per warp (warp load = row length): lengths 5 4 3 3 2 1 go, largest
  // first, to the lighter warp with room: warp 0 gets rows 0, 3, 5 (9), warp 1 rows 1, 2, 4 (9).
  const auto a = from_rows(8, {{0, 1, 2, 3, 4}, {0, 1, 2, 3}, {0, 1, 2}, {5, 6, 7}, {1, 2}, {7}});
  ro::Options o{2, 1, 32, 64};
  const auto p = ro::row_order(a, ro::Order::lpt, o);
  CHECK(p == std::vector<std::int64_t>{0, 1, 3, 2, 5, 4});
  CHECK(ro::max_warp_load(a, p, o) == 9);
  CHECK(ro::max_warp_load(a, ro::row_order(a, ro::Order::original, o), o) == 10);

  const auto m = mask_matrix();
  // 2 warps, line = one column, every warp load 1; candidates in the matrix's order.
  ro::Options h{2, 32, 1, 64, ro::Candidates::matrix};
  // Warp-aware: the two lightest rows (0, 1) start; row i is the nearest to row i - 2: to {0}
  // row 4 (distance 0), to {5} row 2 (1), to {0} row 3.
  CHECK(ro::row_order(m, ro::Order::warp_aware, h) == std::vector<std::int64_t>{0, 1, 4, 2, 3});
  // CTA-aware: from row 0, each the nearest to the one before: 4 (0), 3 (1), 1 (3), 2.
  const auto c = ro::row_order(m, ro::Order::cta_aware, h);
  CHECK(c == std::vector<std::int64_t>{0, 4, 3, 1, 2});
  // B lines per CTA step of 2 rows: {0} + {0,1,5} + {5,6} = 6, against {0,5} + {0,1,5,6} + {0}.
  CHECK(ro::lines_per_step(m, c, h) == 6);
  CHECK(ro::lines_per_step(m, ro::row_order(m, ro::Order::original, h), h) == 7);
  // A window of one row leaves no choice: the matrix order.
  h.window = 1;
  CHECK(ro::row_order(m, ro::Order::cta_aware, h) == std::vector<std::int64_t>{0, 1, 2, 3, 4});

  // Candidates from the shared lines, a window of one: after row 0 the first row left on its
  // line 0 (row 3), after row 3 the next (row 4); row 4's lines have no row left, so the matrix
  // order gives row 1, and row 1's line 5 gives row 2.
  h.candidates = ro::Candidates::shared_lines;
  CHECK(ro::row_order(m, ro::Order::cta_aware, h) == std::vector<std::int64_t>{0, 3, 4, 1, 2});
  // A wide window finds what the matrix order finds.
  h.window = 64;
  CHECK(ro::row_order(m, ro::Order::cta_aware, h) == c);
  CHECK(ro::row_order(m, ro::Order::warp_aware, h) == std::vector<std::int64_t>{0, 1, 4, 2, 3});

  CHECK(ro::parse_candidates("shared-lines") == ro::Candidates::shared_lines);
  CHECK(ro::Options{}.candidates == ro::Candidates::shared_lines);  // the default
  // Only the five Hamming searches take candidates.
  int hamming = 0;
  for (auto order : ro::all_orders()) hamming += ro::uses_candidates(order);
  CHECK(hamming == 5);
  CHECK(ro::uses_candidates(ro::Order::hybrid2_3));
  CHECK_FALSE(ro::uses_candidates(ro::Order::hybrid1));
  CHECK(ro::name(ro::Candidates::matrix) == "matrix");
  CHECK_THROWS_WITH(ro::parse_candidates("nearby"), Catch::Contains("shared-lines"));
  CHECK(ro::parse("hybrid2.1") == ro::Order::hybrid2_1);
  CHECK(ro::name(ro::Order::warp_aware) == "warp-aware");
  CHECK_THROWS_WITH(ro::parse("zigzag"), Catch::Contains("hybrid2.3"));
  CHECK_THROWS_AS(ro::row_order(m, ro::Order::lpt, {0, 32, 32, 64}), Error);
  CHECK(ro::all_orders().size() == 11);
}

TEST_CASE(
    "every row order is a permutation that keeps the product and does what it is named "
    "for",
    "[core][rows]") {
  std::mt19937_64 rng(13);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<Csr64> cases{
      from_rows(5, {}),                                                       // no rows
      from_rows(5, {{1, 3}}),                                                 // one row
      from_rows(9, {{}, {}, {}}),                                             // only empty rows
      from_rows(40, std::vector<std::vector<std::int64_t>>(70, {2, 9, 33})),  // all rows equal
  };
  for (int t = 0; t < 30; ++t) {
    const std::int64_t rows = std::uniform_int_distribution<std::int64_t>(1, 300)(rng);
    const std::int64_t cols = std::uniform_int_distribution<std::int64_t>(1, 400)(rng);
    std::vector<std::vector<std::int64_t>> pat(rows);
    for (auto& r : pat) {
      if (u(rng) < 0.15) continue;                 // empty rows
      const double d = u(rng) < 0.1 ? 0.5 : 0.03;  // a few long rows
      for (std::int64_t c = 0; c < cols; ++c)
        if (u(rng) < d) r.push_back(c);
    }
    cases.push_back(from_rows(cols, pat));
  }
  const auto shared = ro::Candidates::shared_lines;
  const std::vector<ro::Options> options{{32, 32, 32, 64},     {4, 2, 4, 3},
                                         {1, 1, 1, 1},         {32, 32, 32, 64, shared},
                                         {4, 2, 4, 3, shared}, {1, 1, 1, 1, shared}};
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const auto& a = cases[ci];
    std::vector<double> x(a.cols);
    for (auto& v : x) v = u(rng) - 0.5;
    const auto ref = spmv_reference(a, x);
    for (const auto& o : options) {
      const auto plain = ro::row_order(a, ro::Order::plain, o);
      for (auto order : ro::all_orders()) {
        INFO("case " << ci << " (" << a.rows << " rows), order " << ro::name(order) << ", warps "
                     << o.warps << ", window " << o.window << ", candidates "
                     << ro::name(o.candidates));
        const auto p = ro::row_order(a, order, o);
        REQUIRE_NOTHROW(check_permutation(p, a.rows));
        const auto y = spmv_reference(permute_rows(a, p), x);
        for (std::int64_t i = 0; i < a.rows; ++i) REQUIRE(y[i] == ref[p[i]]);
        // LPT and its hybrid leave no warp busier than striping the plain sort does.
        if (order == ro::Order::lpt || order == ro::Order::hybrid1) {
          REQUIRE(ro::max_warp_load(a, p, o) <= ro::max_warp_load(a, plain, o));
        }
        if (order == ro::Order::dcsr) {
          std::int64_t i = 0;
          while (i < a.rows && a.row_length(p[i]) > 0) ++i;
          for (std::int64_t k = i; k < a.rows; ++k) REQUIRE(a.row_length(p[k]) == 0);
          for (std::int64_t k = 1; k < i; ++k) REQUIRE(p[k - 1] < p[k]);
        }
        const auto load = [&](std::int64_t r) {
          return (a.row_length(r) + o.threads - 1) / o.threads;
        };
        if (order == ro::Order::plain)
          for (std::int64_t k = 1; k < a.rows; ++k) REQUIRE(load(p[k - 1]) >= load(p[k]));
        if (order == ro::Order::flipped)  // plain's groups of N_w rows, every other one reversed
          for (std::int64_t k = 0; k < a.rows; ++k) {
            const std::int64_t g = k / o.warps, first = g * o.warps;
            const std::int64_t last = std::min<std::int64_t>(a.rows, first + o.warps) - 1;
            REQUIRE(p[k] == plain[g % 2 ? first + last - k : k]);
          }
      }
    }
  }
}

TEST_CASE("a kept permutation is the one computed, and kept per pattern", "[core][row-orders]") {
  // 2^16 entries or more: row_order keeps its answers.
  std::mt19937_64 rng(9);
  std::vector<std::vector<std::int64_t>> rows(4000);
  for (auto& r : rows) {
    const auto n = 1 + rng() % 40;
    for (std::uint64_t k = 0; k < n; ++k) r.push_back(static_cast<std::int64_t>(rng() % 3000));
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
  }
  const Csr64 a = from_rows(3000, rows);
  REQUIRE(a.nnz() >= (1 << 16));
  std::reverse(rows.begin(), rows.end());  // the same sizes, another pattern
  const Csr64 b = from_rows(3000, rows);
  row_orders::Options o;
  o.warps = 4;
  for (auto order : {row_orders::Order::cta_aware, row_orders::Order::lpt}) {
    const auto first = row_orders::row_order(a, order, o);
    CHECK(row_orders::row_order(a, order, o) == first);
    CHECK(row_orders::compute_row_order(a, order, o) == first);
    o.window = 8;  // other options: its own answer
    CHECK(row_orders::row_order(a, order, o) == row_orders::compute_row_order(a, order, o));
    o.window = 64;
    CHECK(row_orders::row_order(b, order, o) == row_orders::compute_row_order(b, order, o));
  }
  // The rows reversed: the load order is another permutation, not a kept one.
  CHECK(row_orders::row_order(b, row_orders::Order::plain, o) !=
        row_orders::row_order(a, row_orders::Order::plain, o));
}

namespace {

// Row r's lines of B as a set, straight from the definition.
std::set<std::int64_t> lines_of(const Csr64& a, std::int64_t r, int line) {
  std::set<std::int64_t> s;
  for (auto k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) s.insert(a.col_idx[k] / line);
  return s;
}

std::int64_t distance(const std::set<std::int64_t>& x, const std::set<std::int64_t>& y) {
  std::int64_t d = 0;
  for (auto l : x) d += !y.count(l);
  for (auto l : y) d += !x.count(l);
  return d;
}

}  // namespace

TEST_CASE("each Hamming order takes the nearest of its candidates", "[core][rows]") {
  // Random rows of very different lengths, so that long rows sit in the window.
  std::mt19937_64 rng(21);
  for (int t = 0; t < 12; ++t) {
    const std::int64_t rows = 20 + static_cast<std::int64_t>(rng() % 60), cols = 200;
    std::vector<std::vector<std::int64_t>> pat(rows);
    for (auto& r : pat) {
      const auto n = rng() % 4 == 0 ? 60 + rng() % 100 : rng() % 8;
      for (std::uint64_t k = 0; k < n; ++k) r.push_back(static_cast<std::int64_t>(rng() % cols));
      std::sort(r.begin(), r.end());
      r.erase(std::unique(r.begin(), r.end()), r.end());
    }
    const Csr64 a = from_rows(cols, pat);
    std::vector<std::set<std::int64_t>> m;
    for (std::int64_t r = 0; r < rows; ++r) m.push_back(lines_of(a, r, 4));
    INFO("matrix " << t << ", " << rows << " rows");
    // The matrix's order, a window of 3: CTA-aware's row i is the first of the next three rows
    // not placed that is nearest to row i - 1.
    {
      const auto p = ro::row_order(a, ro::Order::cta_aware, {4, 2, 4, 3, ro::Candidates::matrix});
      std::vector<bool> placed(rows, false);
      placed[p[0]] = true;
      for (std::int64_t i = 1; i < rows; ++i) {
        std::int64_t want = -1, best = 0;
        for (std::int64_t r = 0, seen = 0; r < rows && seen < 3; ++r) {
          if (placed[r]) continue;
          ++seen;
          const auto d = distance(m[r], m[p[i - 1]]);
          if (want < 0 || d < best) want = r, best = d;
        }
        REQUIRE(p[i] == want);
        placed[p[i]] = true;
      }
    }
    // A window of every row, either rule: each row is a nearest one among those not placed.
    for (auto c : {ro::Candidates::matrix, ro::Candidates::shared_lines})
      for (auto [order, back] : {std::pair{ro::Order::cta_aware, 1},
                                 {ro::Order::hybrid2_1, 1},
                                 {ro::Order::hybrid2_2, 1},
                                 {ro::Order::warp_aware, 4},
                                 {ro::Order::hybrid2_3, 4}}) {
        INFO(ro::name(order) << ", candidates " << ro::name(c));
        const auto p = ro::row_order(a, order, {4, 2, 4, 1000, c});
        std::vector<bool> placed(rows, false);
        for (std::int64_t i = 0; i < back; ++i) placed[p[i]] = true;
        for (std::int64_t i = back; i < rows; ++i) {
          std::int64_t nearest = -1;
          for (std::int64_t r = 0; r < rows; ++r)
            if (!placed[r]) {
              const auto d = distance(m[r], m[p[i - back]]);
              if (nearest < 0 || d < nearest) nearest = d;
            }
          REQUIRE(distance(m[p[i]], m[p[i - back]]) == nearest);
          placed[p[i]] = true;
        }
      }
  }
}
