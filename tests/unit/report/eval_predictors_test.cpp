// `sparsetune eval` of the row-order predictor and of Slice-GCN: picks against the fastest measured
// order or format, on hand-made times whose figures are computed here by hand; and the evaluators
// reading the rows `collect --op spmm --row-orders` and `collect --op sptv` write.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "core/row_orders.hpp"
#include "core/sptv_matrix.hpp"
#include "io/tns.hpp"
#include "models/slice_selector.hpp"
#include "report/eval.hpp"
#include "report/evaluators.hpp"
#include "row_order_records.hpp"
#include "search/row_order_collect.hpp"
#include "search/slice_collect.hpp"
#include "test_support.hpp"

using namespace sparsetune;

namespace {

const auto kOrders = row_orders::all_orders().size();

std::vector<models::RowOrderRecord> synthetic(int matrices) {
  return testing::feature_decided_records(matrices);
}

// Three records the model picks order 4 for (feature 3 is 1), with times set by hand: the pick
// is the fastest (a), half the fastest's speed (b), or never timed, so it counts as the original
// order's 13 us against the fastest's 6.5 (c); and one without the original's time (skipped).
std::vector<models::RowOrderRecord> judged(const std::vector<models::RowOrderRecord>& trained) {
  std::vector<models::RowOrderRecord> out;
  for (const auto& r : trained)
    if (r.features[3] == 1 && r.n == 32) out.push_back(r);
  out.resize(4);
  out[0].matrix = "a";
  out[1].matrix = "b";
  out[1].time_us[2] = 5.0;
  out[2].matrix = "c";
  out[2].time_us[4] = -1;
  out[2].time_us[0] = 13.0;
  out[2].time_us[9] = 6.5;
  out[3].matrix = "d";
  out[3].time_us[0] = -1;
  return out;
}

void check_judged(const report::PredictorEval& e) {
  REQUIRE(e.matrices.size() == 3);
  // Worst share first: b and c at 0.5 (in either order), then a at 1.
  CHECK(e.matrices[0].share == Approx(0.5));
  CHECK(e.matrices[1].share == Approx(0.5));
  CHECK(e.matrices[2].name == "a");
  CHECK(e.matrices[2].share == Approx(1.0));
  for (const auto& r : e.matrices) {
    CHECK(r.pick == row_orders::name(row_orders::all_orders()[4]));
    if (r.name == "b") CHECK(r.best == row_orders::name(row_orders::all_orders()[2]));
    if (r.name == "c") {
      CHECK(r.pick_us == Approx(13.0));
      CHECK(r.oracle_us == Approx(6.5));
      CHECK(r.ranked == static_cast<int>(kOrders) - 1);
    }
  }
  CHECK(e.top1 == Approx(1.0 / 3));
  CHECK(e.geomean_share == Approx(std::cbrt(0.25)));
  CHECK(e.min_share == Approx(0.5));
  CHECK(e.within_10_percent == 1);
}

models::RowOrderModel trained_model(const std::vector<models::RowOrderRecord>& recs) {
  nlohmann::json rep;
  auto m = models::RowOrderModel::train(recs, {}, &rep);
  for (const auto& r : judged(recs)) {
    REQUIRE(m.predict(r.features, r.n) == 4);
    REQUIRE(m.classify(r.features, r.n) == 4);
  }
  return m;
}

}  // namespace

TEST_CASE("eval scores the row-order predictor's picks against the fastest order", "[eval]") {
  const auto recs = synthetic(40);
  const auto m = trained_model(recs);
  const auto recs2 = judged(recs);
  check_judged(report::evaluate_row_order(recs2, m));
  const auto cls = report::evaluate_row_order(recs2, m, {}, true);
  CHECK_THAT(cls.predictor, Catch::Contains("classifier"));
  check_judged(cls);
  const auto only_b = report::evaluate_row_order(recs2, m, {"b"});
  REQUIRE(only_b.matrices.size() == 1);
  CHECK(only_b.top1 == 0.0);
}

TEST_CASE("eval reads the row orders collect wrote, with the shipped model or without it",
          "[eval]") {
  testing::TempDir dir("sparsetune-eval-row-order");
  const auto recs = synthetic(40);
  const auto m = trained_model(recs);
  models::ModelFile f;
  f.arch = "sm_90";
  std::filesystem::create_directories(dir.path / "models" / "sm_90");
  m.write((dir.path / "models" / "sm_90").string(), f);
  db::TuningDb d(dir.file("t.db"));
  for (const auto& r : judged(recs)) {
    d.put_matrix({"fp-" + r.matrix, r.matrix, r.rows, r.cols, r.nnz, "{}"});
    for (const auto& row :
         search::row_order_measurements(r, "fp-" + r.matrix, "f32", "GPU", "sm_90"))
      d.add(row);
  }
  report::EvalOptions o;
  o.database = "t.db";
  o.models_dir = (dir.path / "models").string();
  const auto run = report::run_evaluators(d, o, {"row-order"});
  REQUIRE(run.evals.size() == 2);
  check_judged(run.evals[0]);
  check_judged(run.evals[1]);
  // With --test-split only the model's held-out matrices count: none of a, b, c is one, so
  // nothing is scored, and the error says so (a score of no matrix would read as 0 %).
  o.test_split = true;
  CHECK_THROWS_WITH(report::run_evaluators(d, o, {"row-order"}),
                    Catch::Contains("row-order: none of the matrices its file holds out"));
  // Without a model the predictor is not scored, and says why; with nothing scored at all that
  // is an error naming each.
  o.test_split = false;
  o.models_dir = (dir.path / "none").string();
  CHECK_THROWS_WITH(report::run_evaluators(d, o, {"row-order", "slice-gcn"}),
                    Catch::Contains("eval: nothing to score; row-order: no row-order model") &&
                        Catch::Contains("slice-gcn: ") && Catch::Contains("does not exist"));
  // The cost model picked nothing here that was measured: not a score of 0 %, but a reason.
  CHECK_THROWS_WITH(report::run_evaluators(d, o, {"cost-model", "row-order"}),
                    Catch::Contains("cost-model: nothing it picked for has been measured") &&
                        Catch::Contains("row-order: no row-order model"));
  CHECK_THROWS_WITH(report::run_evaluators(d, o, {"nope"}), Catch::Contains("no predictor named"));
}

namespace {

// 24 slices along mode 0 of 40 fibers x 40 columns, of four structures.
SparseTensor slice_tensor() {
  std::mt19937_64 rng(5);
  SparseTensor t;
  t.dims = {24, 40, 40};
  t.idx.resize(3);
  for (std::int64_t s = 0; s < 24; ++s) {
    const std::int64_t rows = 10 + rng() % 20;
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t len = s % 4 == 0   ? 3
                               : s % 4 == 1 ? 1
                               : s % 4 == 2 ? (r == 0 ? 30 : 2)
                                            : 1 + rng() % 9;
      for (std::int64_t i = 0; i < len; ++i) {
        t.idx[0].push_back(s), t.idx[1].push_back(r), t.idx[2].push_back((r * 7 + i * 3) % 40);
        t.val.push_back(1.0);
      }
    }
  }
  return t;
}

}  // namespace

TEST_CASE("eval scores slice formats: the rule and a Slice-GCN, all slices or the held-out ones",
          "[eval]") {
  testing::TempDir dir("sparsetune-eval-slices");
  const auto t = slice_tensor();
  io::write_tns(dir.file("s.tns"), t);
  const auto inputs = features::slice_inputs(sptv_matrix(t, 2));
  // Even slices: the rule's format is the fastest (10 us). Odd ones: the next format is, and the
  // rule's takes 20 us; Dense is never timed.
  std::vector<models::SliceTiming> times;
  int scored = 0;
  for (const auto& in : inputs) {
    const int rule = models::rule_format(in.globals, static_cast<double>(in.nonempty_rows));
    const int best = in.slice % 2 == 0 ? rule : (rule + 1) % 4;
    for (int f = 0; f < 4; ++f)
      times.push_back({dir.file("s.tns"), 2, in.slice, f,
                       f == best   ? 10.0
                       : f == rule ? 20.0
                                   : 30.0 + f});
    scored += in.density < 0.23;
  }
  REQUIRE(scored == 24);
  const auto labels = models::label_slices(times);
  const auto e = report::evaluate_slice_formats(labels, "", 0.23, nullptr);
  REQUIRE(e.matrices.size() == 24);
  CHECK(e.predictor == "slice-rule");
  CHECK(e.top1 == Approx(0.5));
  CHECK(e.geomean_share == Approx(std::sqrt(0.5)));
  CHECK(e.min_share == Approx(0.5));
  CHECK(e.within_10_percent == 12);
  CHECK(e.matrices.back().name.rfind("s.tns:2:", 0) == 0);

  // Through the database, as collect --op sptv writes it, with an untrained Slice-GCN whose file
  // holds out four slices: its top-1 is its share of right picks, counted here by hand.
  db::TuningDb d(dir.file("t.db"));
  d.put_matrix({"tns1-x", "s", 40, 40, static_cast<std::int64_t>(t.val.size()),
                nlohmann::json{{"path", dir.file("s.tns")}}.dump()});
  for (const auto& row : search::slice_measurements(times, "tns1-x", "f32", "GPU", "sm_90"))
    d.add(row);
  models::GcnShape shape;
  shape.conv = 4;
  shape.hidden = 4;
  const models::SliceGcn gcn(shape, 3);
  models::GcnModelInfo info;
  info.test_slices = {"s.tns:2:1", "s.tns:2:2", "s.tns:2:5", "s.tns:2:8"};
  std::filesystem::create_directories(dir.path / "models" / "sm_90");
  gcn.save((dir.path / "models" / "sm_90" / "slice_gcn.safetensors").string(), info);
  report::EvalOptions o;
  o.database = "t.db";
  o.models_dir = (dir.path / "models").string();
  const auto run = report::run_evaluators(d, o, {"slice-gcn"});
  REQUIRE(run.evals.size() == 2);
  int right = 0;
  for (const auto& in : inputs)
    right +=
        gcn.predict(in) ==
        (in.slice % 2 == 0
             ? models::rule_format(in.globals, static_cast<double>(in.nonempty_rows))
             : (models::rule_format(in.globals, static_cast<double>(in.nonempty_rows)) + 1) % 4);
  CHECK(run.evals[0].predictor == "slice-gcn");
  CHECK(run.evals[0].matrices.size() == 24);
  CHECK(run.evals[0].top1 == Approx(right / 24.0));
  CHECK(run.evals[1].top1 == Approx(0.5));
  o.test_split = true;
  const auto held = report::run_evaluators(d, o, {"slice-gcn"});
  REQUIRE(held.evals.size() == 2);
  CHECK(held.evals[1].matrices.size() == 4);
  // Slices 2 and 8 are the rule's (even), 1 and 5 not.
  CHECK(held.evals[1].top1 == Approx(0.5));
  // --only names tensors by file.
  o.test_split = false;
  o.only = {"other.tns"};
  CHECK_THROWS_WITH(report::run_evaluators(d, o, {"slice-gcn"}),
                    Catch::Contains("slice-gcn: no labelled slice left to score"));
}
