// Slice-GCN's label collection on the CPU: which slices are sampled, the view kept to them, and
// the per-slice design (one part per slice) computing the product of those slices exactly.
#include "search/slice_timings.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <set>

#include "core/reference.hpp"
#include "gen/random_tensor.hpp"
#include "graph/interpreter.hpp"
#include "search/sptv_gpu.hpp"
#include "test_support.hpp"

using namespace sparsetune;

namespace {

// 4 x 5 x 6, sliced along mode 0 for mode 2: slice s holds s*3 entries (slice 0 empty).
SparseTensor staircase() {
  SparseTensor t;
  t.dims = {4, 5, 6};
  t.idx.resize(3);
  for (std::int64_t s = 1; s < 4; ++s)
    for (std::int64_t e = 0; e < 3 * s; ++e) {
      t.idx[0].push_back(s);
      t.idx[1].push_back(e % 5);
      t.idx[2].push_back((e / 5 + s) % 6);
      t.val.push_back(0.25 * static_cast<double>(s + e + 1));
    }
  return t;
}

}  // namespace

TEST_CASE("sample_slices spreads its picks over slices ranked by entries", "[search][sptv]") {
  const auto m = sptv_matrix(staircase(), 2, 0);
  REQUIRE(graph::slice_entries(m) == std::vector<std::int64_t>{0, 3, 6, 9});
  CHECK(search::sample_slices(m, 10) == std::vector<std::int64_t>{1, 2, 3});  // the empty one out
  CHECK(search::sample_slices(m, 1) == std::vector<std::int64_t>{3});         // the largest
  CHECK(search::sample_slices(m, 2) == std::vector<std::int64_t>{1, 3});      // both ends
  CHECK(search::sample_slices(m, 10, 6) == std::vector<std::int64_t>{2, 3});  // min_nnz
  CHECK(search::sample_slices(m, 10, 10).empty());
  CHECK(search::sample_slices(m, 0).empty());
}

TEST_CASE("keep_slices keeps exactly the rows of the slices named", "[search][sptv]") {
  const auto t = staircase();
  const auto m = sptv_matrix(t, 2, 0);
  const auto k = search::keep_slices(m, {1, 3});
  CHECK(k.slices == m.slices);
  CHECK(k.a.cols == m.a.cols);
  CHECK(graph::slice_entries(k) == std::vector<std::int64_t>{0, 3, 0, 9});
  for (auto s : k.row_slice) CHECK((s == 1 || s == 3));
  // Its product is the full product restricted to those rows.
  const std::vector<double> v = {1, -2, 0.5, 3, -1, 2};
  const auto full = spmv_reference(m.a, v), kept = spmv_reference(k.a, v);
  std::vector<double> expect;
  for (std::int64_t r = 0; r < m.a.rows; ++r)
    if (m.row_slice[r] == 1 || m.row_slice[r] == 3) expect.push_back(full[r]);
  REQUIRE(kept.size() == expect.size());
  for (std::size_t i = 0; i < kept.size(); ++i) CHECK(kept[i] == Approx(expect[i]));
}

TEST_CASE("replicate_slices repeats each slice as consecutive slices of its part",
          "[search][sptv]") {
  const auto m = sptv_matrix(staircase(), 2, 0);
  // Slices 1, 2, 3 hold 3, 5 and 5 fibers.
  CHECK(search::slice_copies(m, {1, 2, 3}, 15, 100) == std::vector<int>{5, 3, 3});
  CHECK(search::slice_copies(m, {1, 3}, 100, 4) == std::vector<int>{4, 4});
  CHECK(search::slice_copies(m, {3}, 1, 4) == std::vector<int>{1});
  // Slices 1 and 3 hold 3 and 9 entries: at most 18 entries of copies each.
  CHECK(search::slice_copies(m, {1, 3}, 100, 100, 18) == std::vector<int>{6, 2});
  const auto r = search::replicate_slices(m, {1, 3}, {2, 3});
  CHECK(r.parts == 2);
  CHECK(r.part_of_slice == std::vector<int>{0, 0, 1, 1, 1});
  CHECK(r.view.slices == 5);
  CHECK(r.view.dims[0] == 5);
  CHECK(graph::slice_entries(r.view) == std::vector<std::int64_t>{3, 3, 9, 9, 9});
  // Each copy computes what its slice does.
  const std::vector<double> v = {1, -2, 0.5, 3, -1, 2};
  const auto full = spmv_reference(m.a, v), rep = spmv_reference(r.view.a, v);
  std::vector<double> expect;
  for (auto [s, n] : {std::pair{1, 2}, std::pair{3, 3}})
    for (int c = 0; c < n; ++c)
      for (std::int64_t row = 0; row < m.a.rows; ++row)
        if (m.row_slice[row] == s) expect.push_back(full[row]);
  REQUIRE(rep.size() == expect.size());
  for (std::size_t i = 0; i < rep.size(); ++i) CHECK(rep[i] == Approx(expect[i]));
  CHECK_THROWS(search::replicate_slices(m, {1}, {0}));
}

TEST_CASE("slice_batches cuts the sampled slices into designs within the budget",
          "[search][sptv]") {
  using V = std::vector<std::size_t>;
  CHECK(search::slice_batches({}, 10) == V{0});
  CHECK(search::slice_batches({4, 4, 4}, 10) == V{0, 2, 3});
  CHECK(search::slice_batches({4, 6, 1}, 10) == V{0, 2, 3});
  // A slice above the budget is a batch of its own.
  CHECK(search::slice_batches({3, 25, 3, 3}, 10) == V{0, 1, 2, 4});
  CHECK(search::slice_batches({25}, 10) == V{0, 1});
  CHECK(search::slice_batches({1, 1, 1, 1}, 1) == V{0, 1, 2, 3, 4});
}

TEST_CASE("plan_slices settles the sample, the copies and the batches before the GPU",
          "[search][sptv]") {
  const auto m = sptv_matrix(staircase(), 2, 0);
  search::SliceTimingOptions o;
  o.max_slices = 10;
  o.target_rows = 15;
  o.max_copies = 100;
  o.design_entries = 30;
  const auto p = search::plan_slices(m, o);
  CHECK(p.chosen == std::vector<std::int64_t>{1, 2, 3});
  CHECK(graph::slice_entries(p.m) == std::vector<std::int64_t>{0, 3, 6, 9});
  // 3, 5 and 5 fibers: 5, 3 and 3 copies of 3, 6 and 9 entries, 15, 18 and 27 in all, so no
  // two of them fit one design of 30.
  CHECK(p.copies == std::vector<int>{5, 3, 3});
  CHECK(p.batch_starts == std::vector<std::size_t>{0, 1, 2, 3});
  o.design_entries = 40;
  CHECK(search::plan_slices(m, o).batch_starts == std::vector<std::size_t>{0, 2, 3});
  o.min_nnz = 10;  // no slice that large: nothing to time
  const auto none = search::plan_slices(m, o);
  CHECK(none.chosen.empty());
  CHECK(none.batch_starts.empty());
}

TEST_CASE("design_slices gives every slice its own launches and the exact product",
          "[search][sptv]") {
  gen::RandomTensorParams rp;
  rp.dims = {12, 40, 30};
  rp.nnz = 2000;
  rp.skew = 1.0;
  for (const auto& t : {staircase(), gen::random_tensor(rp, 5)}) {
    for (int mode = 0; mode < 3; ++mode) {
      const auto full = sptv_matrix(t, mode);
      const auto picked = search::sample_slices(full, 5);
      const auto m = search::keep_slices(full, picked);
      const auto r = search::replicate_slices(m, picked, search::slice_copies(m, picked, 40, 3));
      const auto v = search::sptv_check_v(m.a.cols, "f64");
      const auto ref = spmv_reference(r.view.a, v);
      for (int f = 0; f < graph::kSliceFormats; ++f) {
        INFO("dims " << t.dims[0] << " mode " << mode << " format " << f);
        const auto d = search::design_slices(r, static_cast<graph::SliceFormat>(f), 3, "f64");
        REQUIRE(d.groups.size() == picked.size());
        std::set<std::size_t> seen;
        for (const auto& g : d.groups) {
          CHECK(!g.empty());
          for (const auto& l : g) CHECK(seen.insert(l.get<std::size_t>()).second);
        }
        const auto y = graph::interpret(d.emitted.format, v);
        REQUIRE(y.size() == ref.size());
        CHECK(relative_l2_error(y, ref) < 1e-12);
      }
    }
  }
}

TEST_CASE("slice timings round-trip through their CSV", "[search][sptv]") {
  testing::TempDir dir("sparsetune-slice-csv");
  const std::vector<models::SliceTiming> recs = {
      {"a.tns", 0, 3, 0, 2.5}, {"a.tns", 0, 3, 4, 1.25}, {"sub/b.tns.gz", 2, 17, 3, 10.0}};
  const auto path = (dir.path / "t.csv").string();
  std::ofstream(path) << search::slice_timings_csv(recs);
  const auto back = models::read_slice_timings(path);
  REQUIRE(back.size() == recs.size());
  for (std::size_t i = 0; i < recs.size(); ++i) {
    CHECK(back[i].tensor == recs[i].tensor);
    CHECK(back[i].mode == recs[i].mode);
    CHECK(back[i].slice == recs[i].slice);
    CHECK(back[i].format == recs[i].format);
    CHECK(back[i].time_us == recs[i].time_us);
  }
  const auto labels = models::label_slices(back);
  REQUIRE(labels.size() == 2);
  CHECK(labels[0].format == 4);  // Dense 1.25 us beats CSR 2.5 us
  CHECK(labels[0].margin == Approx(2.0));
}
