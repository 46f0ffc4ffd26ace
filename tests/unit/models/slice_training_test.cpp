// Slice-GCN trained from per-slice timing records on a tensor file, as `slice-gcn train` does.
// The times are made up from the structural rule (a stand-in for GPU measurements, tests only).
#include "models/slice_training.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <random>
#include <set>

#include "core/error.hpp"
#include "core/sptv_matrix.hpp"
#include "io/matrix_file.hpp"
#include "io/slice_source.hpp"
#include "io/tns.hpp"
#include "models/slice_selector.hpp"
#include "test_support.hpp"

using namespace sparsetune;
using namespace sparsetune::models;

namespace {

// 80 slices along mode 0 of 100 fibers x 100 columns, four structures as in slice_gcn_test, plus
// two dense slices that stage 1 keeps for itself.
SparseTensor skewed_tensor() {
  std::mt19937_64 rng(8);
  SparseTensor t;
  t.dims = {82, 100, 100};
  t.idx.resize(3);
  auto add = [&](std::int64_t s, std::int64_t r, std::int64_t len) {
    std::vector<std::int64_t> c(100);
    for (std::int64_t i = 0; i < 100; ++i) c[i] = i;
    for (std::int64_t i = 0; i < len; ++i) {
      std::swap(c[i], c[i + rng() % (100 - i)]);
      t.idx[0].push_back(s), t.idx[1].push_back(r), t.idx[2].push_back(c[i]);
      t.val.push_back(1.0 + static_cast<double>(rng() % 7));
    }
  };
  for (std::int64_t s = 0; s < 80; ++s) {
    const std::int64_t rows = 20 + rng() % 40, l = 2 + rng() % 6, longest = rng() % rows;
    for (std::int64_t r = 0; r < rows; ++r) switch (s % 4) {
        case 0:
          add(s, r, l);
          break;
        case 1:
          add(s, r, rng() % 8 == 0 ? 4 : 1);
          break;
        case 2:
          add(s, r, r == longest ? 60 : 2 + rng() % 2);
          break;
        default:
          add(s, r, 1 + rng() % 14);
          break;
      }
  }
  for (std::int64_t s = 80; s < 82; ++s)
    for (std::int64_t r = 0; r < 100; ++r) add(s, r, 50);
  return t;
}

}  // namespace

TEST_CASE("Slice-GCN trains from timing records and reports held-out accuracy", "[models][gcn]") {
  testing::TempDir dir("sparsetune-slice-training");
  const auto t = skewed_tensor();
  io::write_tns(dir.file("skewed.tns"), t);
  // Times: the rule's format is fastest, the others 1.5x to 3x slower; Dense is never timed.
  // Every fourth slice's runner-up is only 0.4 % slower: a label the timing noise could flip.
  const auto m = sptv_matrix(t, 2);
  std::ofstream csv(dir.file("timings.csv"));
  csv << "tensor,mode,slice,format,time_us\n";
  int close_calls = 0;
  for (const auto& in : features::slice_inputs(m)) {
    const int best = rule_format(in.globals, static_cast<double>(in.nonempty_rows));
    const bool close = in.slice % 4 == 0;
    close_calls += close;
    for (int f = 0; f < 4; ++f)
      csv << "skewed.tns,2," << in.slice << "," << slice_format_classes()[f] << ","
          << (f == best                      ? 10.0
              : close && f == (best + 1) % 4 ? 10.04
                                             : 15.0 + 5.0 * f)
          << "\n";
  }
  REQUIRE(close_calls > 10);
  csv.close();
  const auto labels = label_slices(read_slice_timings(dir.file("timings.csv")));
  REQUIRE(labels.size() == 82);
  SliceTrainingOptions o;
  o.shape.conv = 16;
  o.shape.hidden = 16;
  o.train.epochs = 30;
  o.train.learning_rate = 1e-2;
  SliceGcn model;
  const auto r = train_slice_gcn(labels, dir.path.string(), o, model);
  CHECK(r.labelled == 82);
  CHECK(r.dense_excluded == 2);
  CHECK(r.train + r.test == 80);
  CHECK(r.test == 16);
  // The held-out slices are named for the model file (eval --test-split).
  REQUIRE(r.test_keys.size() == 16);
  CHECK(r.test_keys[0].rfind("skewed.tns:2:", 0) == 0);
  CHECK(r.losses.back() < 0.5 * r.losses.front());
  WARN("held-out accuracy: Slice-GCN " << r.gcn_test_accuracy << ", XGBoost "
                                       << r.xgb_test_accuracy);
  CHECK(r.gcn_test_accuracy >= 0.75);
  // These labels are the structural rule's own choices: it gets every held-out slice right.
  CHECK(r.rule_test_accuracy == 1.0);
  // Judged by the times: the rule's picks are the fastest; a model's right picks are the fastest
  // too (no ties here) and a wrong pick costs at least 1.5x, so its mean slowdown shows them.
  CHECK(r.rule_test_time.fastest == 1.0);
  CHECK(r.rule_test_time.within_5pct == 1.0);
  CHECK(r.rule_test_time.slowdown == Approx(1.0));
  CHECK(r.gcn_test_time.fastest == Approx(r.gcn_test_accuracy));
  CHECK(r.gcn_test_time.within_5pct >= r.gcn_test_accuracy);  // a close call's runner-up is within
  CHECK(r.gcn_test_time.slowdown >= 1.0);
  CHECK(r.gcn_test_time.slowdown <= std::pow(3.0, 1.0 - r.gcn_test_accuracy) + 1e-9);
  // The close calls are left out of the decided labels, the same slices for every model.
  CHECK(r.rule_test_time.decided > 0);
  CHECK(r.rule_test_time.decided < r.test);
  CHECK(r.gcn_test_time.decided == r.rule_test_time.decided);
  CHECK(r.xgb_test_time.decided == r.rule_test_time.decided);
  CHECK(r.rule_test_time.decided_fastest == 1.0);
  CHECK(model.shape().conv == 16);
  SECTION("a given held-out list is held out exactly") {
    auto o2 = o;
    o2.train.epochs = 1;
    o2.test_keys = {r.test_keys[0], r.test_keys[1], "skewed.tns:2:999"};
    SliceGcn m2;
    const auto r2 = train_slice_gcn(labels, dir.path.string(), o2, m2);
    CHECK(r2.test == 2);
    CHECK(r2.train == 78);
    CHECK(r2.test_keys.size() == 2);
    CHECK(std::set<std::string>(r2.test_keys.begin(), r2.test_keys.end()) ==
          std::set<std::string>{r.test_keys[0], r.test_keys[1]});
  }
  SECTION("cross-validation holds each slice out in exactly one fold") {
    auto o2 = o;
    o2.train.epochs = 1;
    o2.folds = 3;
    std::multiset<std::string> held;
    for (int f = 0; f < 3; ++f) {
      o2.fold = f;
      SliceGcn m2;
      const auto r2 = train_slice_gcn(labels, dir.path.string(), o2, m2);
      CHECK(r2.test + r2.train == 80);
      CHECK(r2.test >= 26);
      CHECK(r2.test <= 27);
      held.insert(r2.test_keys.begin(), r2.test_keys.end());
    }
    CHECK(held.size() == 80);
    CHECK(std::set<std::string>(held.begin(), held.end()).size() == 80);
    o2.fold = 3;
    SliceGcn m3;
    CHECK_THROWS_WITH(train_slice_gcn(labels, dir.path.string(), o2, m3),
                      Catch::Contains("fold must be in [0, folds)"));
  }
  SECTION("learning from the times, and the last epochs averaged, reach the model too") {
    auto o2 = o;
    o2.soft_labels = 0.02;
    o2.train.average_last = 10;
    SliceGcn m2;
    const auto r2 = train_slice_gcn(labels, dir.path.string(), o2, m2);
    CHECK(r2.test_keys == r.test_keys);
    CHECK(m2.params() != model.params());
    CHECK(r2.gcn_test_accuracy >= 0.75);
  }
  SECTION("a bag: the first network is the single model, the others under the next seeds") {
    auto o2 = o;
    o2.bag = 3;
    SliceGcn bag;
    const auto r2 = train_slice_gcn(labels, dir.path.string(), o2, bag);
    CHECK(bag.bag_size() == 3);
    CHECK(r2.test_keys == r.test_keys);
    CHECK(bag.params() == model.params());
    // The others change the answer: the bag's probabilities are not the first network's.
    const auto in = labelled_inputs({labels[0]}, dir.path.string()).at(0);
    const auto lp1 = model.log_probs(in), lpb = bag.log_probs(in);
    bool differs = false;
    for (int j = 0; j < 5; ++j) differs = differs || lpb[j] != lp1[j];
    CHECK(differs);
    CHECK(r2.gcn_test_accuracy >= 0.75);
    o2.bag = 0;
    CHECK_THROWS_WITH(train_slice_gcn(labels, dir.path.string(), o2, bag),
                      Catch::Contains("bag must be from 1 to 64"));
  }
  SECTION("a label for a slice the tensor does not have is refused") {
    auto bad = labels;
    bad[0].slice = 90;
    REQUIRE_THROWS_WITH(train_slice_gcn(bad, dir.path.string(), o, model),
                        Catch::Contains("no non-empty slice 90"));
  }
}

TEST_CASE("judge_picks scores picks by the measured times", "[models][gcn]") {
  // Two slices: CSR 10 us fastest with COO 10.05 (a close call), and ELL 8 us fastest with CSR
  // 12 and COO never timed.
  SliceLabel a, b;
  a.time_us = {10.0, 10.05, 20.0, 30.0, INFINITY};
  a.fastest = a.format = 0;
  a.margin = 1.005;
  b.time_us = {12.0, INFINITY, 8.0, 16.0, INFINITY};
  b.fastest = b.format = 2;
  b.margin = 1.5;
  const std::vector<const SliceLabel*> labels = {&a, &b};
  const auto right = judge_picks(labels, {0, 2});
  CHECK(right.fastest == 1.0);
  CHECK(right.within_5pct == 1.0);
  CHECK(right.slowdown == Approx(1.0));
  CHECK(right.decided == 1);
  CHECK(right.decided_fastest == 1.0);
  // COO on the first (1.005x, within 5 %) and CSR on the second (1.5x).
  const auto near = judge_picks(labels, {1, 0});
  CHECK(near.fastest == 0.0);
  CHECK(near.within_5pct == 0.5);
  CHECK(near.slowdown == Approx(std::sqrt(1.005 * 1.5)));
  CHECK(near.decided_fastest == 0.0);
  // A format never timed counts as twice the fastest.
  CHECK(judge_picks(labels, {0, 1}).slowdown == Approx(std::sqrt(2.0)));
  CHECK_THROWS(judge_picks(labels, {0}));
}

TEST_CASE("evaluate_slice_gcn scores a model on labelled slices, Dense ones left out",
          "[models][gcn]") {
  testing::TempDir dir("sparsetune-slice-eval");
  const auto t = skewed_tensor();
  io::write_tns(dir.file("skewed.tns"), t);
  const auto m = sptv_matrix(t, 2);
  // Labelled by the rule, as above, so the rule is right on every slice it is asked about.
  std::ofstream csv(dir.file("timings.csv"));
  csv << "tensor,mode,slice,format,time_us\n";
  for (const auto& in : features::slice_inputs(m)) {
    const int best = rule_format(in.globals, static_cast<double>(in.nonempty_rows));
    for (int f = 0; f < 4; ++f)
      csv << "skewed.tns,2," << in.slice << "," << slice_format_classes()[f] << ","
          << (f == best ? 10.0 : 15.0 + 5.0 * f) << "\n";
  }
  csv.close();
  const auto labels = label_slices(read_slice_timings(dir.file("timings.csv")));
  GcnShape s;
  s.conv = 4;
  s.hidden = 4;
  const SliceGcn untrained(s, 3);
  const auto r = evaluate_slice_gcn(labels, dir.path.string(), 0.23, untrained);
  CHECK(r.labelled == 82);
  CHECK(r.dense_excluded == 2);
  CHECK(r.scored == 80);
  CHECK(r.rule_accuracy == 1.0);
  CHECK(r.rule_time.slowdown == Approx(1.0));
  // The model's accuracy is its share of right picks, counted here by hand.
  const auto inputs = labelled_inputs(labels, dir.path.string());
  int right = 0;
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (inputs[i].density < 0.23) right += untrained.predict(inputs[i]) == labels[i].format;
  CHECK(r.gcn_accuracy == Approx(right / 80.0));
  CHECK(r.gcn_time.fastest == Approx(r.gcn_accuracy));
  // Each scored slice with its label, both picks (the model's the argmax of its
  // log-probabilities), in the labels' order, Dense ones left out.
  REQUIRE(r.slices.size() == 80);
  int listed_right = 0;
  std::size_t k = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (inputs[i].density >= 0.23) continue;
    const auto& v = r.slices[k++];
    CHECK(v.label == &labels[i]);
    CHECK(v.rule == labels[i].format);
    CHECK(v.gcn == untrained.predict(inputs[i]));
    REQUIRE(v.log_probs.size() == 5);
    CHECK(v.log_probs == untrained.log_probs(inputs[i]));
    listed_right += v.gcn == labels[i].format;
  }
  CHECK(listed_right == right);
  // With sp above every slice's density, the two dense slices are scored too.
  CHECK(evaluate_slice_gcn(labels, dir.path.string(), 2.0, untrained).scored == 82);
}

TEST_CASE("sp is re-derived from measured best formats by density group (§4.3)", "[models][gcn]") {
  // Groups 0.10 .. 0.25; Dense is best for some slices from 0.20, for all from 0.23 on.
  std::vector<double> density;
  std::vector<int> best;
  for (int g = 10; g <= 25; ++g)
    for (int i = 0; i < 10; ++i) {
      density.push_back(g / 100.0 + 0.001 * (i % 3));
      best.push_back(g >= 23 || (g >= 20 && i < g - 15) ? 4 : i % 4);
    }
  const auto d = derive_sparsity_threshold(density, best);
  REQUIRE(d.groups.size() == 16);
  CHECK(d.groups[0].density == Approx(0.10));
  CHECK(d.groups[10].share == Approx(0.5));  // 0.20: Dense for i < 5
  CHECK(d.groups[12].share == Approx(0.7));  // 0.22: Dense for i < 7
  CHECK(d.threshold == Approx(0.23));
  best.back() = 0;  // the densest group no longer all Dense: no threshold
  CHECK(std::isnan(derive_sparsity_threshold(density, best).threshold));
}

TEST_CASE("labelled_inputs reads a matrix file's label as its one slice", "[models][gcn]") {
  testing::TempDir dir("sparsetune-slice-matrix-label");
  Csr64 a;  // 4 x 5: rows of 1, 2, 0 and 3 entries
  a.rows = 4;
  a.cols = 5;
  a.row_ptr = {0, 1, 3, 3, 6};
  a.col_idx = {4, 0, 1, 0, 2, 3};
  a.val = {1, 2, 3, 4, 5, 6};
  io::write_matrix(dir.file("m.mtx.gz"), a);
  SliceLabel l;
  l.tensor = "m.mtx.gz";
  l.mode = io::kMatrixSliceMode;
  l.slice = 0;
  const auto in = labelled_inputs({l}, dir.path.string());
  REQUIRE(in.size() == 1);
  // rows, cols, nnz, row lengths mean / max / min, column lengths mean / max / min.
  // Then fibers 3, their mean 2, min 1, standard deviation sqrt(2/3), and 5 distinct columns.
  CHECK(std::vector<double>(in[0].globals.begin(), in[0].globals.begin() + 12) ==
        std::vector<double>{4, 5, 6, 1.5, 3, 0, 1.2, 2, 1, 3, 2, 1});
  CHECK(in[0].globals[12] == Approx(std::sqrt(2.0 / 3)));
  CHECK(in[0].globals[13] == 5);
  CHECK(in[0].nonempty_rows == 3);
  CHECK(in[0].density == Approx(6.0 / 20));
  l.slice = 1;
  CHECK_THROWS_WITH(labelled_inputs({l}, dir.path.string()),
                    Catch::Contains("m.mtx.gz") && Catch::Contains("slice 1"));
}

TEST_CASE("soft targets weigh each format by its measured time", "[models][gcn]") {
  // CSR 10 us fastest, COO 10.2 (2 % slower), ELL 11 (10 %), HYB not timed, Dense 20.
  SliceLabel l;
  l.time_us = {10.0, 10.2, 11.0, INFINITY, 20.0};
  l.fastest = l.format = 0;
  SECTION("margin 0: the label alone") {
    CHECK(soft_target(l, 0.0, 5) == std::vector<double>{1, 0, 0, 0, 0});
  }
  SECTION("margin 0.02: weights exp(-ln(t / 10) / 0.02), normalized") {
    // 1, 1.02^-50 = 0.37153, 1.1^-50 = 0.0085186, 0, 2^-50.
    const double w[5] = {1.0, std::pow(1.02, -50.0), std::pow(1.1, -50.0), 0.0,
                         std::pow(2.0, -50.0)};
    const double sum = w[0] + w[1] + w[2] + w[4];
    const auto t = soft_target(l, 0.02, 5);
    REQUIRE(t.size() == 5);
    CHECK(t[0] == Approx(1.0 / 1.38005).epsilon(1e-3));
    for (int f = 0; f < 5; ++f) CHECK(t[f] == Approx(w[f] / sum).margin(1e-15));
    CHECK(t[3] == 0.0);
  }
  SECTION("a label outside the classes is refused") {
    l.format = 7;
    CHECK_THROWS_AS(soft_target(l, 0.02, 5), Error);
  }
}
