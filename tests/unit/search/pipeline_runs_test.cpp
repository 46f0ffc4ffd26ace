// Alg. 1 copies y back batch by batch: each batch's runs of y, on the CPU. With y slice by slice,
// a batch (a run of consecutive slices of one format) writes exactly the rows of its slices.
#include <catch2/catch.hpp>
#include <random>

#include "codegen/emit.hpp"
#include "core/sptv_matrix.hpp"
#include "graph/slice_assignment.hpp"
#include "search/sptv_gpu.hpp"

using namespace sparsetune;

namespace {

// 12 x 9 x 7 with random entries; slices along mode 0 for mode 2, slice 5 empty.
SparseTensor random_tensor() {
  std::mt19937_64 rng(7);
  SparseTensor t;
  t.dims = {12, 9, 7};
  t.idx.resize(3);
  for (int n = 0; n < 400; ++n) {
    const auto i = static_cast<std::int64_t>(rng() % 12);
    if (i == 5) continue;
    t.idx[0].push_back(i);
    t.idx[1].push_back(static_cast<std::int64_t>(rng() % 9));
    t.idx[2].push_back(static_cast<std::int64_t>(rng() % 7));
    t.val.push_back(1.0 + static_cast<double>(n % 5));
  }
  return t;
}

}  // namespace

TEST_CASE("Each pipeline batch's runs of y hold exactly the rows of its slices", "[search][sptv]") {
  const auto m = sptv_matrix(random_tensor(), 2, 0);
  // Rows of each slice, from the view alone: [first, last + 1).
  std::vector<std::array<std::int64_t, 2>> rows_of(m.slices, {-1, -1});
  for (std::int64_t r = 0; r < m.a.rows; ++r) {
    auto& s = rows_of[m.row_slice[r]];
    if (s[0] < 0) s[0] = r;
    REQUIRE(s[1] <= r);  // slice by slice: a slice's rows are consecutive
    s[1] = r + 1;
  }
  for (bool mixed : {false, true}) {
    INFO((mixed ? "CSR and ELL slices interleaved" : "every slice CSR"));
    std::vector<graph::SliceFormat> formats(m.slices, graph::SliceFormat::CSR);
    if (mixed)
      for (std::int64_t s = 1; s < m.slices; s += 2) formats[s] = graph::SliceFormat::ELL;
    for (int batches : {1, 3, 16}) {
      const auto b = graph::sptv_batched_graph(formats, graph::slice_stats(m), 2, batches);
      codegen::EmitOptions eo;
      eo.design = graph::sptv_design_options(m, "f64");
      eo.sptv = graph::sptv_slices(m, formats);
      const auto e = codegen::generate(b.graph, m.a, eo);
      const int count = b.graph.ops.at(0).params.at("count").get<int>();
      const auto assign = graph::slice_assignment(b.graph.ops.at(0).params, m.slices);
      // Exact runs (no gap taken in): together they are exactly the branch's slices' rows.
      const auto exact = search::branch_y_runs(e.format, count, 0);
      // Any gap taken in: one run per branch, from its first row to its last.
      const auto whole = search::branch_y_runs(e.format, count, m.a.rows);
      REQUIRE(exact.size() == static_cast<std::size_t>(count));
      REQUIRE(whole.size() == static_cast<std::size_t>(count));
      std::int64_t covered = 0;
      for (int br = 0; br < count; ++br) {
        std::vector<bool> want(m.a.rows, false);
        std::int64_t lo = m.a.rows, hi = 0;
        for (std::int64_t s = 0; s < m.slices; ++s)
          if (assign.at(static_cast<std::size_t>(s)) == br && rows_of[s][0] >= 0) {
            for (auto r = rows_of[s][0]; r < rows_of[s][1]; ++r) want[r] = true;
            lo = std::min(lo, rows_of[s][0]);
            hi = std::max(hi, rows_of[s][1]);
          }
        std::vector<bool> got(m.a.rows, false);
        std::int64_t prev_hi = -1;
        for (const auto& run : exact[br]) {
          CHECK(run[0] > prev_hi);  // ascending, apart: else they would be one run
          prev_hi = run[1];
          for (auto r = run[0]; r < run[1]; ++r) got[r] = true;
          covered += run[1] - run[0];
        }
        CHECK(got == want);
        if (hi > lo)
          CHECK(whole[br] == std::vector<std::array<std::int64_t, 2>>{{lo, hi}});
        else
          CHECK(whole[br].empty());
        // Every slice CSR: each batch's rows are one run, nothing of another batch inside.
        if (!mixed) CHECK(exact[br].size() <= 1);
      }
      CHECK(covered == m.a.rows);
    }
  }
}
