// `collect --op sptv` into the tuning database and `train --model slice-gcn` out of it, on the CPU:
// the slice timings come from a stand-in (each slice's fastest format is the structural rule's,
// the others slower), the database and the model are real.
#include "search/slice_collect.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <set>

#include "core/error.hpp"
#include "core/fingerprint.hpp"
#include "core/sptv_matrix.hpp"
#include "features/slice_graph.hpp"
#include "gen/random_tensor.hpp"
#include "io/matrix_file.hpp"
#include "io/slice_source.hpp"
#include "io/tns.hpp"
#include "models/predictors.hpp"
#include "models/slice_gcn.hpp"
#include "models/slice_selector.hpp"
#include "test_support.hpp"

using namespace sparsetune;

namespace {

// Every non-empty slice of the mode: the rule's format 10 us, the others 15 + 5 f us.
search::SliceTimingResult rule_timings(const SparseTensor& t, const search::SliceTimingOptions& o) {
  search::SliceTimingResult r;
  r.device = "test-gpu";
  for (const auto& in : features::slice_inputs(sptv_matrix(t, o.mode))) {
    const int best = models::rule_format(in.globals, static_cast<double>(in.nonempty_rows));
    for (int f = 0; f < 4; ++f)
      r.records.push_back({o.label, o.mode, in.slice, f, f == best ? 10.0 : 15.0 + 5.0 * f});
  }
  return r;
}

SparseTensor small_tensor(std::uint64_t seed) {
  gen::RandomTensorParams p;
  p.dims = {40, 30, 50};
  p.nnz = 3000;
  p.skew = 1.0;
  return gen::random_tensor(p, seed);
}

}  // namespace

TEST_CASE("read_tensor_list takes a folder, a tensor file or a list of tensors",
          "[search][collect][sptv]") {
  testing::TempDir dir("sparsetune-tensor-list");
  io::write_tns(dir.file("b.tns"), small_tensor(1));
  io::write_tns(dir.file("a.tns"), small_tensor(2));
  { std::ofstream(dir.file("notes.txt")) << "not a tensor\n"; }
  const auto folder = search::read_tensor_list(dir.path.string());
  REQUIRE(folder.size() == 2);
  CHECK(folder[0].name == "a");
  CHECK(folder[1].name == "b");
  const auto one = search::read_tensor_list(dir.file("b.tns"));
  REQUIRE(one.size() == 1);
  CHECK(one[0].name == "b");
  { std::ofstream(dir.file("list.txt")) << "a.tns kg\nb.tns\n"; }
  const auto listed = search::read_tensor_list(dir.file("list.txt"));
  REQUIRE(listed.size() == 2);
  CHECK(listed[0].family == "kg");
  { std::ofstream(dir.file("gen.txt")) << "a.tns\ngen kron scale=8\n"; }
  REQUIRE_THROWS_WITH(search::read_tensor_list(dir.file("gen.txt")),
                      Catch::Contains("gen.txt:2") && Catch::Contains("gen tensor"));
  REQUIRE_THROWS_WITH(search::read_tensor_list(dir.file("missing.tns")),
                      Catch::Contains("no such tensor file"));
}

TEST_CASE("collect --op sptv records every slice's times per mode, resumes, and trains Slice-GCN",
          "[search][collect][sptv]") {
  testing::TempDir dir("sparsetune-slice-collect");
  const auto t1 = small_tensor(3), t2 = small_tensor(4);
  io::write_tns(dir.file("t1.tns"), t1);
  io::write_tns(dir.file("t2.tns"), t2);
  const auto items = search::read_tensor_list(dir.path.string());
  search::SliceCollectOptions o;
  o.db_path = dir.file("tuning.db");
  int calls = 0;
  o.time_one = [&](const SparseTensor& t, const search::SliceTimingOptions& opt) {
    ++calls;
    return rule_timings(t, opt);
  };
  const auto s = search::collect_slices(items, o);
  CHECK(s.done == 2);
  CHECK(s.failed == 0);
  CHECK(calls == 6);  // two tensors, three modes each
  {
    db::TuningDb db(o.db_path);
    std::size_t expect = 0;
    for (const auto* t : {&t1, &t2})
      for (int mode = 0; mode < 3; ++mode)
        expect += 4 * features::slice_inputs(sptv_matrix(*t, mode)).size();
    const auto rows = db.measurements();
    CHECK(rows.size() == expect);
    std::set<std::string> fps;
    for (const auto& m : rows) {
      CHECK(m.op == "sptv-slice");
      CHECK(m.dtype == "f32");
      CHECK(m.candidate.rfind("slice/", 0) == 0);
      fps.insert(m.fingerprint);
    }
    CHECK(fps == std::set<std::string>{fingerprint(t1), fingerprint(t2)});
    const auto row = db.matrix(fingerprint(t1));
    REQUIRE(row);
    CHECK(row->name == "t1");
    CHECK(row->nnz == t1.nnz());
    CHECK(db.runs().size() == 6);
  }

  SECTION("a second collect skips what is measured") {
    const auto again = search::collect_slices(items, o);
    CHECK(again.skipped == 2);
    CHECK(calls == 6);
  }
  SECTION("a mode that times nothing fails that tensor, is recorded, and the next goes on") {
    io::write_tns(dir.file("t3.tns"), small_tensor(5));
    o.time_one = [](const SparseTensor&, const search::SliceTimingOptions&) {
      return search::SliceTimingResult{};
    };
    const auto again = search::collect_slices(search::read_tensor_list(dir.path.string()), o);
    CHECK(again.skipped == 2);
    CHECK(again.failed == 1);
    REQUIRE(again.items.size() == 3);
    CHECK(again.items[2].reason.find("no slice was timed") != std::string::npos);
  }
  SECTION("train --model slice-gcn learns from them") {
    db::TuningDb db(o.db_path);
    models::TrainOptions opt;
    opt.out_dir = dir.file("models");
    opt.threads = 2;
    opt.epochs = 4;  // the unit is the database round trip, not the model's quality
    const auto r = models::find_predictor("slice-gcn").train(db, opt);
    CHECK(r.report["model"] == "slice-gcn");
    CHECK(r.report["arch"] == "sm_90");
    CHECK(r.report["training_set"]["tensors"] == 2);
    const int labelled = r.report["training_set"]["labelled"];
    const int test = r.report["split"]["test_slices"], train = r.report["split"]["train_slices"];
    const int dense = r.report["split"]["dense_excluded"];
    CHECK(train + test + dense == labelled);
    // The labels are the rule's own picks: the rule is right on every held-out slice.
    CHECK(r.report["test"]["rule_accuracy"] == 1.0);
    REQUIRE(r.files.size() == 2);
    const auto model = models::SliceGcn::load(r.files[0]);
    CHECK(model.shape().conv == 256);
    SECTION("with the fiber features, as the shipped model reads them") {
      opt.fiber_globals = true;
      opt.out_dir = dir.file("models-fiber");
      const auto f = models::find_predictor("slice-gcn").train(db, opt);
      CHECK(f.report["globals"] == 14);
      CHECK(models::SliceGcn::load(f.files[0]).shape().globals == 14);
      CHECK(r.report["globals"] == 9);
    }
    SECTION("tensors found by file name in another folder") {
      const testing::TempDir moved("sparsetune-slice-moved");
      io::write_tns(moved.file("t1.tns"), t1);
      io::write_tns(moved.file("t2.tns"), t2);
      std::filesystem::remove(dir.file("t1.tns"));
      opt.out_dir.clear();
      opt.data_dir = moved.path.string();
      CHECK(models::find_predictor("slice-gcn").train(db, opt).report["training_set"]["labelled"] ==
            labelled);
    }
  }
  SECTION("a database without slice timings has nothing for slice-gcn") {
    db::TuningDb empty(dir.file("empty.db"));
    REQUIRE_THROWS_AS(models::find_predictor("slice-gcn").train(empty, {}), models::NothingToLearn);
  }
}

TEST_CASE("collect --op sptv times a matrix as one slice, along mode 1 only",
          "[search][collect][sptv]") {
  testing::TempDir dir("sparsetune-slice-matrix");
  // A 30 x 20 matrix: every third position of each row.
  Csr64 a;
  a.rows = 30;
  a.cols = 20;
  a.row_ptr.push_back(0);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    for (std::int64_t c = r % 3; c < a.cols; c += 3) a.col_idx.push_back(c), a.val.push_back(1 + c);
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
  }
  io::write_matrix(dir.file("m.mtx"), a);
  io::write_tns(dir.file("t.tns"), small_tensor(6));
  const auto items = search::read_tensor_list(dir.path.string());
  REQUIRE(items.size() == 2);
  CHECK(items[0].name == "m");
  search::SliceCollectOptions o;
  o.db_path = dir.file("tuning.db");
  std::vector<std::pair<std::int64_t, int>> seen;  // (dims[2], mode) of each call
  o.time_one = [&](const SparseTensor& t, const search::SliceTimingOptions& opt) {
    seen.push_back({t.dims[2], opt.mode});
    return rule_timings(t, opt);
  };
  const auto s = search::collect_slices(items, o);
  CHECK(s.done == 2);
  // The matrix once, along mode 1 (its tensor's third mode is 1 long); the tensor in all three.
  CHECK(seen == std::vector<std::pair<std::int64_t, int>>{{1, 1}, {50, 0}, {50, 1}, {50, 2}});
  db::TuningDb db(o.db_path);
  std::size_t matrix_rows = 0;
  const auto fp = db.matrix(fingerprint(io::read_slice_source(dir.file("m.mtx")).tensor));
  REQUIRE(fp);
  for (const auto& m : db.measurements())
    if (m.fingerprint == fp->fingerprint) {
      ++matrix_rows;
      CHECK(m.n == 1);
      CHECK(m.candidate.rfind("slice/0/", 0) == 0);
    }
  CHECK(matrix_rows == 4);  // one slice, four formats
}
