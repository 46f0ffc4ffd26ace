#include "gen/scenarios.hpp"

#include <algorithm>
#include <random>
#include <tuple>

#include "core/convert.hpp"
#include "core/error.hpp"
#include "gen/assemble.hpp"

namespace sparsetune::gen {

namespace {

using Triples = std::vector<std::tuple<std::int64_t, std::int64_t, double>>;

Csr64 csr(std::int64_t rows, std::int64_t cols, const Triples& t,
          std::int64_t* duplicates = nullptr) {
  Coo64 c;
  c.rows = rows;
  c.cols = cols;
  for (const auto& [r, k, v] : t) c.row.push_back(r), c.col.push_back(k), c.val.push_back(v);
  return coo_to_csr<std::int64_t, std::int64_t>(c, duplicates);
}

// A value that is never 0 and never repeats a simple pattern: wrong indexing shows in y.
double value(std::int64_t r, std::int64_t c) {
  const double m = 1.0 + static_cast<double>((r * 31 + c * 17) % 23) / 8.0;  // in [1, 3.75]
  return (r + c) % 3 == 0 ? -m : m;
}

Triples random_rows(std::mt19937_64& rng, std::int64_t rows, std::int64_t cols,
                    const std::vector<std::int64_t>& lengths) {
  Triples t;
  std::uniform_int_distribution<std::int64_t> col(0, std::max<std::int64_t>(0, cols - 1));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t k = 0; k < std::min(lengths[r], cols); ++k) {
      const auto c = col(rng);
      t.emplace_back(r, c, value(r, c));
    }
  return t;  // repeated columns merge when converted, so rows may come out a little shorter
}

}  // namespace

std::vector<Scenario> scenarios(std::int64_t dense_row) {
  if (dense_row < 1 || dense_row > (std::int64_t{1} << 31) - 1)
    throw Error("gen scenario: dense_row must be in 1..2^31 - 1, got " + std::to_string(dense_row));
  // Its entries as triplets, then as CSR.
  check_entry_budget(static_cast<double>(dense_row), "scenario dense-row", 64, 40);
  std::vector<Scenario> s;
  auto add = [&](std::string id, std::string name, std::string how, Csr64 a,
                 std::int64_t dups = 0) {
    std::string recipe = "sparsetune gen scenario --name " + id;
    if (id == "dense-row") recipe += " --dense-row " + std::to_string(dense_row);
    s.push_back(
        {std::move(id), std::move(name), std::move(how), recipe + " -o A.mtx", std::move(a), dups});
  };
  add("0x0", "0x0", "empty(0, 0)", csr(0, 0, {}));
  add("0xN", "0xN", "empty(0, 9)", csr(0, 9, {}));
  add("Nx0", "Nx0", "empty(9, 0)", csr(9, 0, {}));
  add("all-zero", "all-zero NxM", "empty(13, 7)", csr(13, 7, {}));
  add("1x1", "1x1", "single(3.5)", csr(1, 1, {{0, 0, 3.5}}));
  {
    // Rows 0-4, 40-44 and 95-99 empty; the rest banded.
    Triples t;
    for (std::int64_t r = 5; r < 95; ++r) {
      if (r >= 40 && r < 45) continue;
      for (std::int64_t c = std::max<std::int64_t>(0, r - 3);
           c < std::min<std::int64_t>(100, r + 4); ++c)
        t.emplace_back(r, c, value(r, c));
    }
    add("empty-rows", "empty rows at start, middle and end",
        "banded(100, 7) without rows 0-4, 40-44, 95-99", csr(100, 100, t));
  }
  {
    // Columns 0-9, 50-59 and 110-119 never referenced.
    std::mt19937_64 rng(5);
    Triples t;
    std::uniform_int_distribution<std::int64_t> pick(0, 89);
    for (std::int64_t r = 0; r < 70; ++r)
      for (int k = 0; k < 4; ++k) {
        std::int64_t c = pick(rng);
        c += c < 40 ? 10 : 20;  // 10..49 and 60..109
        t.emplace_back(r, c, value(r, c));
      }
    add("empty-cols", "empty columns",
        "random(70, 120, 4 per row, seed 5) avoiding columns 0-9, 50-59, 110-119", csr(70, 120, t));
  }
  {
    Triples t;
    for (std::int64_t c = 0; c < dense_row; ++c) t.emplace_back(17, c, value(17, c));
    for (std::int64_t r = 0; r < 64; ++r)
      if (r != 17) t.emplace_back(r, (r * 997) % dense_row, value(r, r));
    add("dense-row", "one dense row of " + std::to_string(dense_row),
        "dense_row(rows 64, cols " + std::to_string(dense_row) + ", row 17)",
        csr(64, dense_row, t));
  }
  {
    Triples t;
    for (std::int64_t r = 0; r < 48; ++r)
      for (std::int64_t c = 0; c < 40; ++c) t.emplace_back(r, c, value(r, c));
    add("dense", "dense 48x40", "dense(48, 40)", csr(48, 40, t));
  }
  {
    // A tridiagonal matrix whose every third entry is a stored 0.0.
    Triples t;
    for (std::int64_t r = 0; r < 60; ++r)
      for (std::int64_t c = std::max<std::int64_t>(0, r - 1);
           c <= std::min<std::int64_t>(59, r + 1); ++c)
        t.emplace_back(r, c, (r + c) % 3 == 0 ? 0.0 : value(r, c));
    add("explicit-zeros", "explicit zeros", "tridiagonal(60) with every third entry 0.0",
        csr(60, 60, t));
  }
  {
    // Every entry given twice or three times (summed when converted, as Matrix Market does).
    Triples t;
    std::mt19937_64 rng(9);
    std::uniform_int_distribution<std::int64_t> col(0, 49);
    for (std::int64_t r = 0; r < 50; ++r)
      for (int k = 0; k < 3; ++k) {
        const auto c = col(rng);
        t.emplace_back(r, c, value(r, c));
        t.emplace_back(r, c, 0.25);
        if (k == 0) t.emplace_back(r, c, -1.0);
      }
    std::int64_t dups = 0;
    Csr64 a = csr(50, 50, t, &dups);
    add("duplicates", "duplicates", "random(50, 50, 3 per row, seed 9), each entry repeated",
        std::move(a), dups);
  }
  {
    std::mt19937_64 rng(15);
    std::poisson_distribution<std::int64_t> len(1.5);
    std::vector<std::int64_t> lengths(3000);
    for (auto& l : lengths) l = len(rng);
    for (std::int64_t r = 0; r < 3000; r += 401) lengths[r] = 700;  // a few heavy rows
    add("poisson", "Poisson(1.5) imbalanced rows",
        "poisson(3000 x 2500, mean 1.5, every 401st row 700, seed 15)",
        csr(3000, 2500, random_rows(rng, 3000, 2500, lengths)));
  }
  {
    std::mt19937_64 rng(21);
    add("tall", "tall 4000x30", "random(4000, 30, 3 per row, seed 21)",
        csr(4000, 30, random_rows(rng, 4000, 30, std::vector<std::int64_t>(4000, 3))));
  }
  {
    std::mt19937_64 rng(23);
    add("wide", "wide 30x4000", "random(30, 4000, 90 per row, seed 23)",
        csr(30, 4000, random_rows(rng, 30, 4000, std::vector<std::int64_t>(30, 90))));
  }
  return s;
}

Scenario scenario(const std::string& id, std::int64_t dense_row) {
  auto all = scenarios(dense_row);
  std::string ids;
  for (auto& s : all) {
    if (s.id == id) return std::move(s);
    ids += (ids.empty() ? "" : ", ") + s.id;
  }
  throw Error("gen scenario: unknown name '" + id + "' (known: " + ids + ")");
}

}  // namespace sparsetune::gen
