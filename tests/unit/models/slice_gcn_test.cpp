// Slice-GCN: gradients against finite differences, save/load, training on a separable synthetic
// set (labels from the structural rule: a stand-in for GPU-measured labels, for tests only), the
// XGBoost comparison on the 9 global features, labelling from timings, and the two stages.
#include "models/slice_gcn.hpp"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "core/error.hpp"
#include "io/file_bytes.hpp"
#include "io/safetensors.hpp"
#include "models/slice_labels.hpp"
#include "models/slice_selector.hpp"
#include "models/xgb_classifier.hpp"

using namespace sparsetune;
using namespace sparsetune::models;

namespace {

Csr64 csr_from_lengths(const std::vector<std::int64_t>& len, std::int64_t cols,
                       std::mt19937_64& rng) {
  Csr64 a;
  a.rows = static_cast<std::int64_t>(len.size());
  a.cols = cols;
  a.row_ptr.push_back(0);
  for (auto l : len) {
    std::vector<std::int64_t> c(cols);
    for (std::int64_t i = 0; i < cols; ++i) c[i] = i;
    for (std::int64_t i = 0; i < l; ++i) std::swap(c[i], c[i + rng() % (cols - i)]);
    std::sort(c.begin(), c.begin() + l);
    for (std::int64_t i = 0; i < l; ++i) a.col_idx.push_back(c[i]), a.val.push_back(1.0);
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
  }
  return a;
}

// Synthetic slices of four structures: regular, short fibers with a few of 4, a regular body
// with a few very long fibers, and irregular lengths.
std::vector<features::SliceInput> synthetic(int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<features::SliceInput> out;
  for (int i = 0; i < n; ++i) {
    const std::int64_t rows = 20 + rng() % 40, cols = 60 + rng() % 40;
    std::vector<std::int64_t> len(rows);
    switch (i % 4) {
      case 0: {
        const std::int64_t l = 2 + rng() % 6;
        for (auto& x : len) x = l;
        break;
      }
      case 1:
        for (auto& x : len) x = rng() % 8 == 0 ? 4 : 1;
        break;
      case 2:
        for (auto& x : len) x = 2 + rng() % 2;
        len[rng() % rows] = 50;
        break;
      default:
        for (auto& x : len) x = 1 + rng() % 14;
        break;
    }
    out.push_back(features::matrix_input(csr_from_lengths(len, cols, rng)));
  }
  return out;
}

std::vector<int> rule_labels(const std::vector<features::SliceInput>& x) {
  std::vector<int> y;
  for (const auto& s : x) y.push_back(rule_format(s.globals, static_cast<double>(s.nonempty_rows)));
  return y;
}

// Rewrites one field of a model file's `shape` metadata.
void set_shape_field(const std::string& path, const char* key, const nlohmann::json& value) {
  auto f = io::read_safetensors(path);
  auto shape = nlohmann::json::parse(f.metadata.at("shape"));
  shape[key] = value;
  f.metadata["shape"] = shape.dump();
  io::write_safetensors(path, f);
}

// Rewrites a model file without its array `name`, and with `values` of `shape` in its place
// unless `values` is empty.
void replace_array(const std::string& path, const std::string& name,
                   const std::vector<double>& values, std::vector<std::int64_t> shape) {
  const auto f = io::read_safetensors(path);
  io::SafetensorsFile g;
  g.metadata = f.metadata;
  for (const auto& arr : f.arrays)
    if (arr.name != name) g.arrays.push_back(arr);
  if (!values.empty()) io::add_array(g, name, values, std::move(shape));
  io::write_safetensors(path, g);
}

// The worst relative difference between `loss`'s analytic gradient and central differences of
// its value, over every weight of `net`.
double worst_gradient_error(SliceGcn& net,
                            const std::function<double(std::vector<double>*)>& loss) {
  std::vector<double> grad(net.params().size(), 0.0);
  loss(&grad);
  const double h = 1e-6;
  double worst = 0.0;
  for (std::size_t k = 0; k < net.params().size(); ++k) {
    const double keep = net.params()[k];
    net.params()[k] = keep + h;
    const double up = loss(nullptr);
    net.params()[k] = keep - h;
    const double down = loss(nullptr);
    net.params()[k] = keep;
    const double numeric = (up - down) / (2 * h);
    worst = std::max(worst, std::abs(numeric - grad[k]) / std::max(1e-4, std::abs(numeric)));
  }
  return worst;
}

// A small model trained for a few epochs on 24 synthetic slices, for the training options' tests.
struct SmallTraining {
  std::vector<features::SliceInput> x;
  std::vector<int> y;
  GcnShape shape;
  GcnTrainOptions options;
  explicit SmallTraining(std::uint64_t data_seed, int epochs) : x(synthetic(24, data_seed)) {
    y = rule_labels(x);
    shape.conv = 8;
    shape.hidden = 8;
    options.epochs = epochs;
    options.learning_rate = 1e-2;
  }
};

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() /
          (std::string("sparsetune-") + std::to_string(::getpid()) + "-" + name))
      .string();
}

}  // namespace

TEST_CASE("Slice-GCN gradients match finite differences", "[models][gcn]") {
  GcnShape s;
  s.conv = 3;
  s.hidden = 4;
  s.sum_aggregation = GENERATE(false, true);
  s.node_features = GENERATE(4, kGcnNodeFeaturesWithBuckets);
  INFO((s.sum_aggregation ? "sum" : "mean")
       << " aggregation, " << s.node_features << " node features");
  SliceGcn net(s, 7);
  auto x = synthetic(4, 3);
  // A diagonal slice: every row node looks like every other, and every column node too, so the
  // second layer computes each side once and weights it by 12 in the backward pass.
  Csr64 diag;
  diag.rows = diag.cols = 12;
  for (std::int64_t i = 0; i <= 12; ++i) diag.row_ptr.push_back(i);
  for (std::int64_t i = 0; i < 12; ++i) diag.col_idx.push_back(i), diag.val.push_back(1.0);
  x.push_back(features::matrix_input(diag));
  for (int sample = 0; sample < 5; ++sample) {
    const int label = sample % 5;
    INFO("sample " << sample);
    CHECK(worst_gradient_error(
              net, [&](std::vector<double>* g) { return net.loss(x[sample], label, g); }) < 1e-4);
  }
}

TEST_CASE("Slice-GCN has the paper's layout by default", "[models][gcn]") {
  SliceGcn net;
  // 2 GraphConv (4→256, 256→256, self and neighbour weights, biases), MLP 521→128→5.
  const std::size_t want = 2 * 4 * 256 + 256 + 2 * 256 * 256 + 256 + 521 * 128 + 128 + 128 * 5 + 5;
  CHECK(net.params().size() == want);
  const auto lp = net.log_probs(synthetic(1, 9)[0]);
  REQUIRE(lp.size() == 5);
  double total = 0.0;
  for (double v : lp) total += std::exp(v);
  CHECK(total == Approx(1.0));
}

TEST_CASE("Slice-GCN save and load keep every weight and refuse bad files", "[models][gcn]") {
  GcnShape s;
  s.conv = 8;
  s.hidden = 6;
  const SliceGcn net(s, 11);
  const std::string path = temp_path("gcn.safetensors");
  GcnModelInfo info;
  info.date = "2026-01-02";
  info.labels = "synthetic";
  net.save(path, info);
  GcnModelInfo back_info;
  const SliceGcn back = SliceGcn::load(path, &back_info);
  CHECK(back.params() == net.params());
  CHECK(back_info.date == "2026-01-02");
  CHECK(back_info.labels == "synthetic");
  CHECK(back_info.arch == "sm_90");
  const auto x = synthetic(3, 5);
  for (const auto& in : x) CHECK(back.log_probs(in) == net.log_probs(in));
  SECTION("another format version is refused by name") {
    auto f = io::read_safetensors(path);
    f.metadata["format_version"] = "99";
    io::write_safetensors(path, f);
    REQUIRE_THROWS_WITH(SliceGcn::load(path), Catch::Contains("format_version 99"));
  }
  SECTION("a missing weight is refused by name") {
    replace_array(path, "mlp2.bias", {}, {});
    REQUIRE_THROWS_WITH(SliceGcn::load(path), Catch::Contains("mlp2.bias"));
  }
  SECTION("the degree buckets' shape round-trips, their names in the file") {
    GcnShape b = s;
    b.node_features = kGcnNodeFeaturesWithBuckets;
    const SliceGcn wide(b, 12);
    wide.save(path, info);
    const SliceGcn wide_back = SliceGcn::load(path);
    CHECK(wide_back.shape().node_features == kGcnNodeFeaturesWithBuckets);
    CHECK(wide_back.params() == wide.params());
    for (const auto& in : x) CHECK(wide_back.log_probs(in) == wide.log_probs(in));
    const auto names =
        nlohmann::json::parse(io::read_safetensors(path).metadata.at("node_features"));
    REQUIRE(names.size() == 12);
    CHECK(names[4] == "degree_in_(0,1]");
    CHECK(names[6] == "degree_in_(2,4]");
    CHECK(names[11] == "degree_over_64");
  }
  SECTION("a node feature count this build does not know is refused") {
    set_shape_field(path, "node_features", 5);
    REQUIRE_THROWS_WITH(SliceGcn::load(path), Catch::Contains("shape out of range"));
  }
  SECTION("an unknown aggregation is refused by name") {
    set_shape_field(path, "aggregation", "max");
    REQUIRE_THROWS_WITH(SliceGcn::load(path), Catch::Contains("aggregation 'max'"));
  }
  std::filesystem::remove(path);
}

TEST_CASE("Slice-GCN sums or averages the neighbours, and its file says which", "[models][gcn]") {
  GcnShape s;
  s.conv = 5;
  s.hidden = 6;
  SliceGcn mean(s, 13);
  s.sum_aggregation = true;
  SliceGcn sum(s, 13);
  REQUIRE(sum.params() == mean.params());  // the same weights: only the aggregation differs
  // One row of three entries: its node's neighbours sum to three times their mean.
  std::mt19937_64 rng(1);
  const auto in = features::matrix_input(csr_from_lengths({3, 1}, 4, rng));
  CHECK(sum.log_probs(in) != mean.log_probs(in));
  // Every node of the identity has degree one: the same sum and mean.
  Csr64 eye;
  eye.rows = eye.cols = 3;
  eye.row_ptr = {0, 1, 2, 3};
  eye.col_idx = {0, 1, 2};
  eye.val = {1.0, 1.0, 1.0};
  const auto perm = features::matrix_input(eye);
  const auto a = sum.log_probs(perm), b = mean.log_probs(perm);
  for (std::size_t k = 0; k < a.size(); ++k) CHECK(a[k] == Approx(b[k]).epsilon(1e-12));
  const std::string path = temp_path("gcn-sum.safetensors");
  sum.save(path, GcnModelInfo{});
  const SliceGcn back = SliceGcn::load(path);
  CHECK(back.shape().sum_aggregation);
  CHECK(back.log_probs(in) == sum.log_probs(in));
  // A file without the key (written before the choice existed) averages.
  auto f = io::read_safetensors(path);
  auto shape = nlohmann::json::parse(f.metadata.at("shape"));
  shape.erase("aggregation");
  f.metadata["shape"] = shape.dump();
  io::write_safetensors(path, f);
  CHECK_FALSE(SliceGcn::load(path).shape().sum_aggregation);
  std::filesystem::remove(path);
}

TEST_CASE("Slice-GCN standardizes the globals by its training slices and keeps that on disk",
          "[models][gcn]") {
  GcnShape s;
  s.conv = 4;
  s.hidden = 3;
  SliceGcn net(s, 5);
  CHECK(net.global_mean() == std::vector<double>(9, 0.0));
  CHECK(net.global_std() == std::vector<double>(9, 1.0));
  auto x = synthetic(2, 8);
  // log1p of the first global: 0 and 2 (mean 1, standard deviation 1); the second: e^3 - 1
  // twice (a constant keeps the scale 1); the others unchanged from the synthetic slices.
  x[0].globals[0] = 0.0;
  x[1].globals[0] = std::exp(2.0) - 1.0;
  x[0].globals[1] = x[1].globals[1] = std::exp(3.0) - 1.0;
  GcnTrainOptions o;
  o.epochs = 1;
  net.train(x, {0, 1}, o);
  CHECK(net.global_mean()[0] == Approx(1.0));
  CHECK(net.global_std()[0] == Approx(1.0));
  CHECK(net.global_mean()[1] == Approx(3.0));
  CHECK(net.global_std()[1] == 1.0);
  const double a = std::log1p(x[0].globals[2]), b = std::log1p(x[1].globals[2]);
  CHECK(net.global_mean()[2] == Approx((a + b) / 2));
  CHECK(net.global_std()[2] == Approx(std::abs(a - b) / 2));

  const std::string path = temp_path("gcn-std.safetensors");
  net.save(path, {});
  const SliceGcn back = SliceGcn::load(path);
  CHECK(back.global_mean() == net.global_mean());
  CHECK(back.global_std() == net.global_std());
  for (const auto& in : x) CHECK(back.log_probs(in) == net.log_probs(in));
  SECTION("a standard deviation that is not positive is refused by name") {
    replace_array(path, "globals.std", std::vector<double>(9, 0.0), {1, 9});
    REQUIRE_THROWS_WITH(SliceGcn::load(path), Catch::Contains("globals.std"));
  }
  SECTION("a model without the standardization is refused by name") {
    replace_array(path, "globals.mean", {}, {});
    REQUIRE_THROWS_WITH(SliceGcn::load(path), Catch::Contains("globals.mean"));
  }
  std::filesystem::remove(path);
}

TEST_CASE("Slice-GCN training refuses bad options by name and a loss that diverges",
          "[models][gcn]") {
  const auto x = synthetic(16, 31);
  const auto y = rule_labels(x);
  SliceGcn net(GcnShape{}, 3);
  GcnTrainOptions o;
  o.epochs = 0;
  CHECK_THROWS_WITH(net.train(x, y, o), Catch::Contains("epochs must be at least 1"));
  o.epochs = 2;
  o.learning_rate = 0;
  CHECK_THROWS_WITH(net.train(x, y, o), Catch::Contains("learning rate must be a positive"));
  o.learning_rate = 1e-2;
  o.weight_decay = -1;
  CHECK_THROWS_WITH(net.train(x, y, o), Catch::Contains("weight decay must be 0 or more"));
  // Steps of 1e300 overflow the weights within an epoch or two.
  o.weight_decay = 0;
  o.learning_rate = 1e300;
  CHECK_THROWS_WITH(net.train(x, y, o), Catch::Contains("loss is not finite after epoch"));
}

TEST_CASE("Slice-GCN training drives the loss down and classifies held-out slices",
          "[models][gcn]") {
  const auto train_x = synthetic(160, 21), test_x = synthetic(80, 22);
  const auto train_y = rule_labels(train_x), test_y = rule_labels(test_x);
  GcnShape s;
  s.conv = 16;
  s.hidden = 16;
  SliceGcn net(s, 3);
  GcnTrainOptions o;
  o.epochs = 40;
  o.learning_rate = 1e-2;
  const auto losses = net.train(train_x, train_y, o);
  CHECK(losses.back() < 0.5 * losses.front());
  const double gcn = net.accuracy(test_x, test_y);
  // The XGBoost comparison on the 9 global features alone.
  std::vector<std::vector<double>> gx, tx;
  for (const auto& in : train_x) gx.push_back(in.globals);
  for (const auto& in : test_x) tx.push_back(in.globals);
  XgbClassifier xgb(5);
  xgb.fit(gx, train_y);
  const double tree = xgb.accuracy(tx, test_y);
  WARN("held-out accuracy on synthetic slices: Slice-GCN " << gcn << ", XGBoost " << tree);
  CHECK(gcn >= 0.8);
  CHECK(tree >= 0.8);
  SECTION("training is deterministic for a seed") {
    SliceGcn again(s, 3);
    again.train(train_x, train_y, o);
    CHECK(again.params() == net.params());
  }
  SECTION("and whatever the number of threads sharing a batch") {
    for (int threads : {1, 3}) {
      SliceGcn again(s, 3);
      auto ot = o;
      ot.threads = threads;
      CHECK(again.train(train_x, train_y, ot) == losses);
      CHECK(again.params() == net.params());
    }
  }
}

TEST_CASE("labels are the fastest measured format per slice", "[models][gcn]") {
  const std::vector<SliceTiming> t = {
      {"a.tns", 0, 3, 0, 5.0}, {"a.tns", 0, 3, 2, 4.0}, {"a.tns", 0, 3, 4, NAN},
      {"a.tns", 0, 1, 1, 2.0}, {"a.tns", 0, 1, 3, 2.0}, {"a.tns", 1, 3, 0, -1.0},
  };
  const auto l = label_slices(t);
  REQUIRE(l.size() == 2);
  CHECK(l[0].slice == 1);
  CHECK(l[0].format == 1);  // a tie goes to the lower format number
  CHECK(l[0].margin == 1.0);
  CHECK(l[1].slice == 3);
  CHECK(l[1].format == 2);
  CHECK(l[1].measured == 2);
  CHECK(l[1].margin == Approx(1.25));
  CHECK(l[1].fastest == 2);
  CHECK(l[1].time_us[0] == 5.0);
  CHECK(std::isinf(l[1].time_us[4]));  // its run failed
  CHECK(time_ratio(l[1], 0) == Approx(1.25));
  CHECK(std::isinf(time_ratio(l[1], 4)));
  SECTION("formats within the tie tolerance of the fastest: the lowest-numbered is the label") {
    const std::vector<SliceTiming> u = {{"b.tns", 0, 0, 1, 10.0},
                                        {"b.tns", 0, 0, 3, 9.8},
                                        {"b.tns", 0, 0, 4, 9.7},
                                        {"b.tns", 0, 0, 0, 10.5}};
    const auto strict = label_slices(u);
    CHECK(strict[0].format == 4);
    CHECK(strict[0].fastest == 4);
    const auto tied = label_slices(u, 0.04);  // 9.7 * 1.04 = 10.09: COO, HYB and Dense tie
    CHECK(tied[0].format == 1);
    CHECK(tied[0].fastest == 4);
    CHECK(label_slices(u, 0.09)[0].format == 0);  // CSR's 10.5 is within 9 % too
    CHECK_THROWS_WITH(label_slices(u, -0.1), Catch::Contains("tie tolerance"));
  }
  SECTION("timings from CSV, errors name the line and field") {
    const std::string path = temp_path("timings.csv");
    std::ofstream(path) << "tensor,mode,slice,format,time_us\n# comment\nx.tns,1,4,HYB,2.5\n";
    const auto r = read_slice_timings(path);
    REQUIRE(r.size() == 1);
    CHECK(r[0].format == 3);
    CHECK(r[0].time_us == 2.5);
    std::ofstream(path) << "x.tns,1,4,HYB,2.5\nx.tns,1,4,BSR,2.5\n";
    REQUIRE_THROWS_WITH(read_slice_timings(path), Catch::Contains(":2") && Catch::Contains("BSR"));
    std::ofstream(path) << "x.tns,one,4,HYB,2.5\n";
    REQUIRE_THROWS_WITH(read_slice_timings(path), Catch::Contains("field mode"));
    // A slice and format timed twice in one file: both lines named (merge would average it in
    // as a collection of its own). The same slice in another format is its own time.
    std::ofstream(path) << "x.tns,1,4,HYB,2.5\nx.tns,1,4,CSR,3\nx.tns,1,4,HYB,12345\n";
    REQUIRE_THROWS_WITH(read_slice_timings(path),
                        Catch::Contains(":3") && Catch::Contains("x.tns:1:4:HYB of line 1"));
    // Gzip, as the shipped labels are: the same records, errors still naming the line.
    std::ofstream(path, std::ios::binary)
        << io::gzip("# merged\ntensor,mode,slice,format,time_us\ny.tns,0,7,ELL,1.25\n");
    const auto z = read_slice_timings(path);
    REQUIRE(z.size() == 1);
    CHECK(z[0].tensor == "y.tns");
    CHECK(z[0].slice == 7);
    CHECK(z[0].format == 2);
    CHECK(z[0].time_us == 1.25);
    std::ofstream(path, std::ios::binary) << io::gzip("y.tns,0,7,ELL\n");
    REQUIRE_THROWS_WITH(read_slice_timings(path),
                        Catch::Contains(":1") && Catch::Contains("5 fields"));
    std::filesystem::remove(path);
  }
  SECTION("collections merged: the geometric mean per slice and format, tensors by file name") {
    const std::vector<SliceTiming> a = {{"../x/a.tns", 0, 3, 0, 2.0},
                                        {"../x/a.tns", 0, 3, 1, 3.0},
                                        {"../x/a.tns", 0, 5, 2, -1.0}};  // a failed run
    const std::vector<SliceTiming> b = {{"a.tns", 0, 3, 0, 8.0},         // the same file elsewhere
                                        {"a.tns", 0, 3, 1, 3.0},
                                        {"a.tns", 0, 5, 2, 4.0},   // timed by b alone
                                        {"a.tns", 1, 3, 0, 1.0}};  // another mode
    const auto m = merge_slice_timings({a, b});
    REQUIRE(m.size() == 4);
    for (const auto& r : m) CHECK(r.tensor == "../x/a.tns");  // the first collection's name
    CHECK(m[0].mode == 0);
    CHECK(m[0].slice == 3);
    CHECK(m[0].format == 0);
    CHECK(m[0].time_us == Approx(4.0));  // sqrt(2 * 8)
    CHECK(m[1].time_us == Approx(3.0));
    CHECK(m[2].slice == 5);
    CHECK(m[2].time_us == Approx(4.0));
    CHECK(m[3].mode == 1);
    // a alone labels slice 3 CSR (2 < 3); merged, COO's 3 beats CSR's 4.
    CHECK(label_slices(a)[0].format == 0);
    CHECK(label_slices(m)[0].format == 1);
    CHECK(merge_slice_timings({}).empty());
  }
}

TEST_CASE("stage 1 sends dense slices to Dense, stage 2 the rest to the classifier",
          "[models][gcn]") {
  std::mt19937_64 rng(4);
  std::vector<std::int64_t> dense(10, 5), sparse(10, 1);
  std::vector<features::SliceInput> s = {
      features::matrix_input(csr_from_lengths(dense, 20, rng)),    // density 0.25
      features::matrix_input(csr_from_lengths(sparse, 20, rng))};  // density 0.05
  const auto c = select_formats(s);
  CHECK(c[0].format == 4);
  CHECK(c[0].by == "density");
  CHECK(c[1].format == 2);  // regular fibers of one entry: ELL by the rule
  CHECK(c[1].by == "rule");
  SelectOptions o;
  o.sparsity_threshold = 0.3;
  GcnShape sh;
  sh.conv = 4;
  sh.hidden = 4;
  const SliceGcn net(sh, 1);
  o.gcn = &net;
  const auto g = select_formats(s, o);
  CHECK(g[0].by == "slice-gcn");
  CHECK(g[0].format == net.predict(s[0]));

  // Many slices (several chunks over the cores): each choice is the network's for that slice,
  // in slice order.
  std::vector<features::SliceInput> many;
  for (int i = 0; i < 300; ++i) {
    std::vector<std::int64_t> len(3 + i % 7);
    for (auto& l : len) l = 1 + static_cast<std::int64_t>(rng() % 9);
    many.push_back(features::matrix_input(csr_from_lengths(len, 16, rng)));
    many.back().slice = i;
  }
  const auto m = select_formats(many, o);
  REQUIRE(m.size() == many.size());
  std::set<int> formats;
  for (std::size_t i = 0; i < many.size(); ++i) {
    CHECK(m[i].slice == static_cast<std::int64_t>(i));
    CHECK(m[i].format == (many[i].density >= 0.3 ? 4 : net.predict(many[i])));
    formats.insert(m[i].format);
  }
  CHECK(formats.size() >= 2);  // the slices differ enough for the choices to differ
}

TEST_CASE("Slice-GCN reads the paper's 9 globals, or 14 with the fiber features", "[models][gcn]") {
  GcnShape s;
  s.conv = 8;
  s.hidden = 6;
  const auto x = synthetic(4, 9);
  REQUIRE(x[0].globals.size() == 14);
  // A 9-global model ignores the fiber features.
  const SliceGcn paper(s, 3);
  auto changed = x[0];
  for (std::size_t j = features::kPaperGlobals; j < changed.globals.size(); ++j)
    changed.globals[j] *= 7;
  CHECK(paper.log_probs(changed) == paper.log_probs(x[0]));
  // A 14-global model reads them, and its file says so.
  s.globals = features::kAllGlobals;
  const SliceGcn fiber(s, 3);
  CHECK(fiber.log_probs(changed) != fiber.log_probs(x[0]));
  const std::string path = temp_path("gcn-fiber.safetensors");
  fiber.save(path, {});
  const SliceGcn back = SliceGcn::load(path);
  CHECK(back.shape().globals == 14);
  CHECK(back.log_probs(x[1]) == fiber.log_probs(x[1]));
  CHECK(nlohmann::json::parse(io::read_safetensors(path).metadata.at("global_features")).size() ==
        14);
  SECTION("a global count this build does not know is refused") {
    set_shape_field(path, "globals", 10);
    REQUIRE_THROWS_WITH(SliceGcn::load(path), Catch::Contains("10 globals"));
  }
  SECTION("an input with too few globals is refused") {
    auto short_in = x[0];
    short_in.globals.resize(9);
    CHECK_NOTHROW(paper.log_probs(short_in));
    REQUIRE_THROWS_WITH(fiber.log_probs(short_in), Catch::Contains("too few globals"));
  }
  std::filesystem::remove(path);
}

TEST_CASE("Slice-GCN learns from a distribution over the classes", "[models][gcn]") {
  GcnShape s;
  s.conv = 3;
  s.hidden = 4;
  SliceGcn net(s, 5);
  const auto x = synthetic(4, 9);
  SECTION("a one-hot target is the label's NLL, value and gradient") {
    for (int label = 0; label < 5; ++label) {
      std::vector<double> onehot(5, 0.0), g1(net.params().size(), 0.0), g2(g1);
      onehot[label] = 1.0;
      const double a = net.loss(x[label % 4], label, &g1);
      const double b = net.loss(x[label % 4], onehot, &g2);
      CHECK(b == Approx(a).epsilon(1e-14));
      for (std::size_t k = 0; k < g1.size(); ++k) REQUIRE(g2[k] == Approx(g1[k]).margin(1e-14));
    }
  }
  SECTION("the cross-entropy is the target's mix of the classes' NLLs, its gradient exact") {
    const std::vector<double> t = {0.5, 0.3, 0.0, 0.2, 0.0};
    double mix = 0.0;
    for (int c = 0; c < 5; ++c) mix += t[c] * net.loss(x[1], c, nullptr);
    CHECK(net.loss(x[1], t, nullptr) == Approx(mix).epsilon(1e-12));
    CHECK(worst_gradient_error(net, [&](std::vector<double>* g) { return net.loss(x[1], t, g); }) <
          1e-4);
  }
  SECTION("a target of the wrong length is refused") {
    CHECK_THROWS_AS(net.loss(x[0], std::vector<double>{1.0, 0.0}, nullptr), Error);
  }
}

TEST_CASE("Slice-GCN averages its weights over the last epochs when asked", "[models][gcn]") {
  const SmallTraining t(31, 5);
  const auto& x = t.x;
  const auto& y = t.y;
  const auto& s = t.shape;
  const auto& o = t.options;
  SliceGcn last(s, 2), before(s, 2), one(s, 2), two(s, 2);
  last.train(x, y, o);
  auto o4 = o;
  o4.epochs = 4;
  before.train(x, y, o4);
  auto o1 = o;
  o1.average_last = 1;
  one.train(x, y, o1);
  CHECK(one.params() == last.params());  // the mean of one epoch is that epoch
  auto o2 = o;
  o2.average_last = 2;
  two.train(x, y, o2);
  REQUIRE(two.params() != last.params());
  for (std::size_t k = 0; k < two.params().size(); ++k)
    REQUIRE(two.params()[k] == Approx((last.params()[k] + before.params()[k]) / 2).margin(1e-12));
  SECTION("more epochs averaged than trained is refused") {
    auto bad = o;
    bad.average_last = 6;
    SliceGcn net(s, 2);
    CHECK_THROWS_AS(net.train(x, y, bad), Error);
    CHECK_THROWS_WITH(net.train(x, y, bad),
                      Catch::Contains("average_last 6") && Catch::Contains("epochs (5)"));
  }
}

TEST_CASE("Slice-GCN's weight decay shrinks the weights", "[models][gcn]") {
  const SmallTraining t(33, 10);
  const auto& x = t.x;
  const auto& y = t.y;
  const auto& s = t.shape;
  auto o = t.options;
  SliceGcn plain(s, 4), decayed(s, 4);
  plain.train(x, y, o);
  o.weight_decay = 5.0;
  decayed.train(x, y, o);
  const auto norm = [](const std::vector<double>& w) {
    double n = 0.0;
    for (double v : w) n += v * v;
    return n;
  };
  CHECK(norm(decayed.params()) < 0.5 * norm(plain.params()));
}

TEST_CASE("Slice-GCN's degree buckets are one-hot powers of two", "[models][gcn]") {
  // Rows of 1, 2, 3, 5 and 70 entries over 100 columns; column c holds an entry of every row
  // whose length exceeds c, so column 0 has degree 5, columns 1 and 2 have 4 and 3, ...
  Csr64 a;
  a.rows = 5;
  a.cols = 100;
  a.row_ptr = {0};
  for (std::int64_t len : {1, 2, 3, 5, 70}) {
    for (std::int64_t c = 0; c < len; ++c) a.col_idx.push_back(c), a.val.push_back(1.0);
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
  }
  const auto in = features::matrix_input(a);
  REQUIRE(in.row_nodes == 5);
  const int F = kGcnNodeFeaturesWithBuckets;
  const auto x = gcn_node_features(in, F);
  REQUIRE(x.size() == static_cast<std::size_t>(in.row_nodes + in.col_nodes) * F);
  const auto bucket = [&](int node) {
    int hot = -1, ones = 0;
    for (int b = 0; b < kGcnDegreeBuckets; ++b)
      if (x[static_cast<std::size_t>(node) * F + 4 + b] == 1.0) hot = b, ++ones;
    CHECK(ones == 1);
    return hot;
  };
  // Rows: 1 -> (0,1], 2 -> (1,2], 3 -> (2,4], 5 -> (4,8], 70 -> over 64.
  CHECK(bucket(0) == 0);
  CHECK(bucket(1) == 1);
  CHECK(bucket(2) == 2);
  CHECK(bucket(3) == 3);
  CHECK(bucket(4) == 7);
  // The first 4 are the usual ones: row 4 is a row of degree 70, the largest of the rows.
  CHECK(x[4 * F + 0] == 1.0);
  CHECK(x[4 * F + 2] == Approx(std::log1p(70.0) / 4));
  CHECK(x[4 * F + 3] == 1.0);
  // Column 0 (degree 5), column 4 (degree 2: rows 3 and 4), column 69 (degree 1).
  CHECK(bucket(in.row_nodes + 0) == 3);
  CHECK(bucket(in.row_nodes + 4) == 1);
  CHECK(bucket(in.row_nodes + 69) == 0);
  CHECK(gcn_node_features(in, 4).size() ==
        static_cast<std::size_t>(in.row_nodes + in.col_nodes) * 4);
  CHECK_THROWS_AS(gcn_node_features(in, 5), Error);
}

TEST_CASE("a bag of Slice-GCNs averages its networks' probabilities and round-trips",
          "[models][gcn]") {
  GcnShape s;
  s.conv = 8;
  s.hidden = 6;
  const SliceGcn a(s, 31), b(s, 32), c(s, 33);
  SliceGcn bag = a;
  bag.add_member(b);
  bag.add_member(c);
  CHECK(bag.bag_size() == 3);
  const auto x = synthetic(6, 41);
  for (const auto& in : x) {
    // Each network alone, then their probabilities' mean by hand.
    const auto pa = a.log_probs(in), pb = b.log_probs(in), pc = c.log_probs(in);
    const auto pbag = bag.log_probs(in);
    REQUIRE(pbag.size() == 5);
    double total = 0.0;
    for (int j = 0; j < 5; ++j) {
      const double mean = (std::exp(pa[j]) + std::exp(pb[j]) + std::exp(pc[j])) / 3.0;
      CHECK(std::exp(pbag[j]) == Approx(mean).epsilon(1e-12));
      total += std::exp(pbag[j]);
    }
    CHECK(total == Approx(1.0));
    const int pick = static_cast<int>(std::max_element(pbag.begin(), pbag.end()) - pbag.begin());
    CHECK(bag.predict(in) == pick);
  }
  const std::string path = temp_path("bag.safetensors");
  GcnModelInfo info;
  info.date = "2026-11-28";
  bag.save(path, info);
  SECTION("the file is version 3 with the bag's count, and loads back to the same model") {
    const auto f = io::read_safetensors(path);
    CHECK(f.metadata.at("format_version") == "3");
    CHECK(f.metadata.at("bag") == "3");
    CHECK(f.find("bag.2.mlp2.bias") != nullptr);
    const SliceGcn back = SliceGcn::load(path);
    CHECK(back.bag_size() == 3);
    CHECK(back.params() == a.params());
    for (const auto& in : x) CHECK(back.log_probs(in) == bag.log_probs(in));
  }
  SECTION("one network is still written as version 2") {
    a.save(path, info);
    CHECK(io::read_safetensors(path).metadata.at("format_version") == "2");
    CHECK(SliceGcn::load(path).bag_size() == 1);
  }
  SECTION("a bag count that is not 2 to 64, or a missing member, is refused by name") {
    for (const char* bad : {"1", "65", "x", ""}) {
      auto f = io::read_safetensors(path);
      f.metadata["bag"] = bad;
      io::write_safetensors(path, f);
      INFO("bag '" << bad << "'");
      REQUIRE_THROWS_WITH(SliceGcn::load(path), Catch::Contains("bag '"));
    }
    auto f = io::read_safetensors(path);
    f.metadata["bag"] = "4";
    io::write_safetensors(path, f);
    REQUIRE_THROWS_WITH(SliceGcn::load(path), Catch::Contains("bag.3.conv1.w_self is missing"));
  }
  SECTION("members of another shape, or bags within bags, are refused") {
    GcnShape other = s;
    other.conv = 4;
    SliceGcn one = a;
    REQUIRE_THROWS_WITH(one.add_member(SliceGcn(other, 1)), Catch::Contains("one shape"));
    REQUIRE_THROWS_WITH(one.add_member(bag), Catch::Contains("one network"));
  }
}

TEST_CASE("piecewise-linear encoding of a global over its bins", "[models][gcn]") {
  // Bins [0, 1] and [1, 3].
  const double edges[] = {0.0, 1.0, 3.0};
  double out[2];
  const auto enc = [&](double v) {
    encode_piecewise(v, edges, 2, out);
    return std::vector<double>(out, out + 2);
  };
  CHECK(enc(-1.0) == std::vector<double>{0.0, 0.0});
  CHECK(enc(0.5) == std::vector<double>{0.5, 0.0});
  CHECK(enc(2.0) == std::vector<double>{1.0, 0.5});
  CHECK(enc(5.0) == std::vector<double>{1.0, 1.0});
  // A bin of zero width (a quantile repeated) is a step at its edge.
  const double flat[] = {1.0, 1.0, 2.0};
  encode_piecewise(0.5, flat, 2, out);
  CHECK(std::vector<double>(out, out + 2) == std::vector<double>{0.0, 0.0});
  encode_piecewise(1.0, flat, 2, out);
  CHECK(std::vector<double>(out, out + 2) == std::vector<double>{1.0, 0.0});
}

TEST_CASE("Slice-GCN's global bins: quantile edges, gradients, and the file", "[models][gcn]") {
  GcnShape s;
  s.conv = 3;
  s.hidden = 4;
  s.global_bins = 2;
  SliceGcn net(s, 5);
  // 2 × 3 pooled channels, 9 standardized globals and 9 × 2 bins.
  CHECK(net.params().size() == 2 * 4 * 3 + 3 + 2 * 3 * 3 + 3 + (6 + 9 + 18) * 4 + 4 + 4 * 5 + 5);
  auto x = synthetic(3, 8);
  // log1p of the first global: 0, 1 and 4: edges at the quantiles 0, 1/2, 1.
  x[0].globals[0] = 0.0;
  x[1].globals[0] = std::exp(1.0) - 1.0;
  x[2].globals[0] = std::exp(4.0) - 1.0;
  GcnTrainOptions o;
  o.epochs = 1;
  net.train(x, {0, 1, 2}, o);
  REQUIRE(net.global_edges().size() == 9 * 3);
  CHECK(net.global_edges()[0] == Approx(0.0));
  CHECK(net.global_edges()[1] == Approx(1.0));
  CHECK(net.global_edges()[2] == Approx(4.0));
  for (int j = 0; j < 9; ++j) {
    INFO("global " << j);
    CHECK(net.global_edges()[j * 3] <= net.global_edges()[j * 3 + 1]);
    CHECK(net.global_edges()[j * 3 + 1] <= net.global_edges()[j * 3 + 2]);
  }
  CHECK(worst_gradient_error(net, [&](std::vector<double>* g) { return net.loss(x[1], 3, g); }) <
        1e-4);

  const std::string path = temp_path("gcn-bins.safetensors");
  net.save(path, {});
  const SliceGcn back = SliceGcn::load(path);
  CHECK(back.shape() == s);
  CHECK(back.global_edges() == net.global_edges());
  for (const auto& in : x) CHECK(back.log_probs(in) == net.log_probs(in));
  SECTION("edges out of order are refused by name") {
    auto e = net.global_edges();
    std::swap(e[0], e[2]);
    replace_array(path, "globals.edges", e, {9, 3});
    REQUIRE_THROWS_WITH(SliceGcn::load(path), Catch::Contains("globals.edges"));
  }
  SECTION("a count of bins out of range is refused by name") {
    set_shape_field(path, "global_bins", kMaxGlobalBins + 1);
    REQUIRE_THROWS_WITH(SliceGcn::load(path), Catch::Contains("global_bins"));
  }
  SECTION("a model without bins writes the shape it always did") {
    SliceGcn plain(GcnShape{}, 1);
    plain.save(path, {});
    const auto shape = nlohmann::json::parse(io::read_safetensors(path).metadata.at("shape"));
    CHECK_FALSE(shape.contains("global_bins"));
    CHECK(io::read_safetensors(path).find("globals.edges") == nullptr);
    CHECK(SliceGcn::load(path).shape().global_bins == 0);
  }
  std::filesystem::remove(path);
}
