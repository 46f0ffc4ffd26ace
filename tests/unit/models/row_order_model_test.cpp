// The row-order predictor on synthetic times whose best order is a known function of the
// features: training must recover it on held-out matrices; the CSV and the model files round
// trip; a model for other features is refused as stale.
#include "models/row_order_model.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/row_orders.hpp"
#include "io/file_bytes.hpp"
#include "row_order_records.hpp"
#include "test_support.hpp"

using namespace sparsetune;

namespace {

std::vector<models::RowOrderRecord> synthetic(int matrices) {
  return testing::feature_decided_records(matrices);
}

}  // namespace

TEST_CASE("the row-order CSV round trips and names bad fields", "[models][row-order]") {
  testing::TempDir t("sparsetune-row-order-csv");
  auto recs = synthetic(3);
  recs[1].time_us[5] = -1;
  recs[1].notes = "warp-aware: failed, badly";
  recs[1].cusparse_us = 12.5;
  recs[2].candidates = row_orders::Candidates::matrix;
  const auto path = (t.path / "t.csv").string();
  io::write_file_atomic(path, models::row_order_csv(recs));
  const auto back = models::read_row_order_csv(path);
  REQUIRE(back.size() == recs.size());
  CHECK(back[1].matrix == "m0");
  CHECK(back[1].n == 128);
  CHECK(back[1].time_us == recs[1].time_us);
  CHECK(back[1].features == recs[1].features);
  CHECK(back[1].notes == "warp-aware: failed; badly");
  CHECK(back[1].cusparse_us == 12.5);
  CHECK(back[0].cusparse_us == -1);
  CHECK(models::best_order(back[2]) == 4);
  CHECK(back[1].candidates == row_orders::Candidates::shared_lines);
  CHECK(back[2].candidates == row_orders::Candidates::matrix);

  // Each line without `drop` of the fields before its last (the notes).
  auto without = [&](int drop) {
    std::istringstream in(io::read_file(path));
    std::string old, line;
    while (std::getline(in, line)) {
      auto cut = line.rfind(',');
      const auto last = cut;
      for (int i = 0; i < drop; ++i) cut = line.rfind(',', cut - 1);
      old += line.substr(0, cut) + line.substr(last) + "\n";
    }
    return old;
  };
  // A CSV written before the candidate rule was recorded reads as the matrix rule's.
  {
    const auto old = without(1);
    REQUIRE(old.find("candidates") == std::string::npos);
    io::write_file_atomic(path + ".old", old);
    const auto was = models::read_row_order_csv(path + ".old");
    REQUIRE(was.size() == recs.size());
    CHECK(was[1].cusparse_us == 12.5);
    CHECK(was[1].candidates == row_orders::Candidates::matrix);
  }
  // And one written before cuSPARSE was timed beside the orders.
  {
    const auto old = without(2);
    REQUIRE(old.find("cusparse_us") == std::string::npos);
    io::write_file_atomic(path + ".old", old);
    const auto was = models::read_row_order_csv(path + ".old");
    REQUIRE(was.size() == recs.size());
    CHECK(was[1].time_us == recs[1].time_us);
    CHECK(was[1].notes == "warp-aware: failed; badly");
    CHECK(was[1].cusparse_us == -1);
    CHECK(was[1].candidates == row_orders::Candidates::matrix);
  }
  // A rule the program does not know is named with its line.
  {
    std::string text = io::read_file(path);
    text.replace(text.find(",shared-lines,"), 14, ",nearest,");
    io::write_file_atomic(path + ".bad", text);
    CHECK_THROWS_WITH(models::read_row_order_csv(path + ".bad"),
                      Catch::Contains("t.csv.bad:2") && Catch::Contains("'candidates'") &&
                          Catch::Contains("nearest"));
  }

  // Saved on Windows, with a byte-order mark: read as written.
  {
    std::string text = "\xEF\xBB\xBF" + io::read_file(path);
    for (std::size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 2))
      text.insert(at, "\r");
    io::write_file_atomic(path + ".crlf", text);
    const auto was = models::read_row_order_csv(path + ".crlf");
    REQUIRE(was.size() == recs.size());
    CHECK(was[1].notes == "warp-aware: failed; badly");
    CHECK(was[2].candidates == row_orders::Candidates::matrix);
  }
  // One matrix at one N twice in a file: refused with both lines, not counted twice.
  {
    const std::string text = io::read_file(path);
    const auto second = text.find('\n') + 1, third = text.find('\n', second) + 1;
    io::write_file_atomic(path + ".dup", text + text.substr(second, third - second));
    CHECK_THROWS_WITH(models::read_row_order_csv(path + ".dup"),
                      Catch::Contains("t.csv.dup:8") && Catch::Contains("first on line 2"));
  }
  // Counts are whole numbers in range.
  for (const auto& [from, to] : {std::pair<std::string, std::string>{",32,", ",0.5,"},
                                 {",32,", ",1e30,"}, {"m1,", "m1,-3"}}) {
    std::string text = io::read_file(path);
    const auto at = text.find(from, text.find("\nm1,"));
    text.replace(at, from.size(), to);
    io::write_file_atomic(path + ".count", text);
    CHECK_THROWS_WITH(models::read_row_order_csv(path + ".count"),
                      Catch::Contains("must be a whole number"));
  }

  std::string text = io::read_file(path);
  text.replace(text.find("\nm0,1000"), 8, "\nm0,abc!");
  io::write_file_atomic(path, text);
  CHECK_THROWS_WITH(models::read_row_order_csv(path),
                    Catch::Contains("t.csv:2") && Catch::Contains("'rows'"));
  io::write_file_atomic(path, "matrix,rows\n");
  CHECK_THROWS_WITH(models::read_row_order_csv(path), Catch::Contains("column 3 must be 'cols'"));
}

TEST_CASE("the row-order model learns a feature-decided best order", "[models][row-order]") {
  const auto recs = synthetic(40);
  nlohmann::json rep;
  models::RowOrderTrainOptions o;
  const auto m = models::RowOrderModel::train(recs, o, &rep);
  const auto& test = rep["test"];
  REQUIRE(test["records"].get<int>() >= 10);
  // The oracle is 1.3x or more over the original on two thirds of the records.
  CHECK(test["oracle_speedup"].get<double>() > 1.15);
  CHECK(test["predicted_exact"].get<double>() == Approx(1.0));
  CHECK(test["predicted_share_of_oracle_gain"].get<double>() == Approx(1.0));
  CHECK(test["classified_exact"].get<double>() == Approx(1.0));
  // Arithmetic means: the oracle is 1.3 + 0.01k over the original on the records where the
  // original is not best, 1 elsewhere, so its mean lies between; a perfect pick takes all of it.
  CHECK(test["oracle_speedup_mean"].get<double>() > 1.0);
  CHECK(test["oracle_speedup_mean"].get<double>() < 1.38);
  CHECK(test["oracle_speedup_mean"].get<double>() >= test["oracle_speedup"].get<double>());
  CHECK(test["predicted_share_of_oracle_gain_mean"].get<double>() == Approx(1.0));
  CHECK(test["predicted_share_of_oracle_performance_mean"].get<double>() == Approx(1.0));
  CHECK(test["predicted_within_4pct"].get<double>() == Approx(1.0));
  // On the training side the same statistics from the report's own rows: each record's
  // t_best / t_pick, averaged, and those within 4 % of the oracle.
  {
    const auto& train = rep["train"];
    double sum = 0, within = 0, cls = 0;
    for (const auto& r : train["rows"]) {
      const double best = r["best_us"].get<double>(), pick = r["predicted_us"].get<double>();
      sum += best / pick;
      within += pick <= 1.04 * best;
      cls += best / r["classified_us"].get<double>();
    }
    const double n = static_cast<double>(train["rows"].size());
    REQUIRE(n > 0);
    CHECK(train["predicted_share_of_oracle_performance_mean"].get<double>() == Approx(sum / n));
    CHECK(train["predicted_within_4pct"].get<double>() == Approx(within / n));
    CHECK(train["classified_share_of_oracle_performance_mean"].get<double>() == Approx(cls / n));
    CHECK(train["predicted_share_of_oracle_performance_mean"].get<double>() <= 1.0);
  }
  // The held-out matrices are not trained on, and both N of one matrix sit on one side.
  std::set<std::string> held;
  for (const auto& n : rep["split"]["test"]) held.insert(n.get<std::string>());
  CHECK(held.size() * 2 == test["records"].get<std::size_t>());

  testing::TempDir t("sparsetune-row-order-model");
  models::ModelFile f;
  f.arch = "sm_90";
  const auto paths = m.write(t.path.string(), f);
  REQUIRE(paths.size() == 2);
  const auto back = models::RowOrderModel::read(paths[0]);
  for (const auto& r : recs) {
    CHECK(back.predict(r.features, r.n) == m.predict(r.features, r.n));
    CHECK(back.classify(r.features, r.n) == m.classify(r.features, r.n));
  }
  std::string why;
  CHECK(models::RowOrderModel::find(t.path.parent_path().string(), "sm_11", &why) ==
        std::nullopt);
  CHECK_THAT(why, Catch::Contains("no row-order model"));

  // A rule that is not one is named with its field, whatever its type.
  const auto original = io::read_file(paths[0]);
  for (const auto& bad : {nlohmann::json("bogus"), nlohmann::json(5)}) {
    auto o = nlohmann::json::parse(original);
    o["options"]["candidates"] = bad;
    io::write_file_atomic(paths[0], o.dump());
    CHECK_THROWS_WITH(models::RowOrderModel::read(paths[0]),
                      Catch::Contains("field 'options.candidates'"));
  }
  io::write_file_atomic(paths[0], original);

  // A description listing other inputs is stale.
  auto j = nlohmann::json::parse(io::read_file(paths[0]));
  j["features"].push_back("permutation.something_new");
  io::write_file_atomic(paths[0], j.dump());
  CHECK_THROWS_WITH(models::RowOrderModel::read(paths[0]), Catch::Contains("stale"));
}

TEST_CASE("row-order training holds out the matrices it is told to", "[models][row-order]") {
  const auto recs = synthetic(40);
  models::RowOrderTrainOptions o;
  o.held_out = {"m3", "m17", "m30"};
  o.held_out_from = "earlier.json";
  nlohmann::json rep;
  models::RowOrderModel::train(recs, o, &rep);
  std::set<std::string> held;
  for (const auto& n : rep["split"]["test"]) held.insert(n.get<std::string>());
  CHECK(held == o.held_out);
  CHECK(rep["test"]["records"].get<int>() == 6);  // both N of each
  CHECK(rep["split"]["held_out_like"] == "earlier.json");
  CHECK(rep["split"]["held_out_found"] == 3);
  // Names of no matrix trained on are refused, not read as an empty test part.
  o.held_out = {"not-there"};
  CHECK_THROWS_WITH(models::RowOrderModel::train(recs, o, nullptr), Catch::Contains("none of the"));
}

TEST_CASE("row-order training with no boosting rounds is the priors, the classifier still boosted",
          "[models][row-order]") {
  const auto recs = synthetic(40);
  models::RowOrderTrainOptions o;
  o.xgb.rounds = 0;
  o.inner_folds = 0;
  nlohmann::json rep;
  const auto m = models::RowOrderModel::train(recs, o, &rep);
  // Priors alone pick one order per N; the classifier, fitted, picks the feature-decided best.
  CHECK(rep["test"]["classified_exact"].get<double>() == Approx(1.0));
  std::set<int> picks;
  for (const auto& r : recs) picks.insert(m.predict(r.features, r.n) * 1000 + int(r.n));
  CHECK(picks.size() <= 2);
}

TEST_CASE("row-order training refuses too few measured matrices", "[models][row-order]") {
  auto recs = synthetic(5);
  for (auto& r : recs)
    if (r.matrix != "m0" && r.matrix != "m1") r.time_us[0] = -1;  // original not measured
  CHECK_THROWS_WITH(models::RowOrderModel::train(recs, {}, nullptr), Catch::Contains("2 matrices"));
}

namespace {

// One record of matrix `name` at N = n: every order 10 us but those in `times`.
models::RowOrderRecord timed(const std::string& name, std::int64_t n,
                             const std::map<int, double>& times) {
  models::RowOrderRecord r;
  r.matrix = name;
  r.rows = r.cols = 100;
  r.nnz = 500;
  r.n = n;
  r.features.assign(models::row_order_feature_names().size(), 1.0);
  r.time_us.assign(row_orders::all_orders().size(), 10.0);
  for (const auto& [k, t] : times) r.time_us[k] = t;
  r.order_ms.assign(row_orders::all_orders().size(), 0.1);
  return r;
}

}  // namespace

TEST_CASE("the order classes are chosen greedily by the oracle they add", "[models][row-order]") {
  const auto a = timed("a", 32, {{2, 5.0}});
  const auto b = timed("b", 32, {{4, 5.0}});
  const auto c = timed("c", 32, {{4, 8.0}, {7, 4.5}});
  const std::vector<const models::RowOrderRecord*> recs = {&a, &b, &c};
  std::vector<double> oracle;
  // Order 4 first: (1 * 2 * 1.25)^(1/3) = 1.357 against 2^(1/3) for order 2 and
  // (1 * 1 * 2.22)^(1/3) = 1.305 for order 7. Then order 2: (2 * 2 * 1.25)^(1/3) = 1.710 against
  // (1 * 2 * 2.22)^(1/3) = 1.644 for order 7.
  CHECK(models::greedy_order_classes(recs, 3, &oracle) == std::vector<int>{0, 4, 2});
  REQUIRE(oracle.size() == 3);
  CHECK(oracle[0] == Approx(1.0));
  CHECK(oracle[1] == Approx(std::cbrt(2.5)));
  CHECK(oracle[2] == Approx(std::cbrt(5.0)));
  const auto all = models::greedy_order_classes(recs, 0);
  CHECK(all.size() == row_orders::all_orders().size());
  CHECK(std::set<int>(all.begin(), all.end()).size() == all.size());
  CHECK(models::greedy_order_classes(recs, 1) == std::vector<int>{0});
}

TEST_CASE("with priors a model without informative features picks the best order of each N",
          "[models][row-order]") {
  // Every matrix alike to the features; LPT (4) is best at N = 32 and hybrid-1 (7) at N = 128,
  // by 10 % and 20 %, with a little spread between matrices.
  std::vector<models::RowOrderRecord> recs;
  for (int i = 0; i < 24; ++i) {
    const double d = 0.05 * (i % 5);
    recs.push_back(timed("m" + std::to_string(i), 32, {{4, 9.0 + d}, {7, 9.5 + d}}));
    recs.push_back(timed("m" + std::to_string(i), 128, {{4, 9.5 + d}, {7, 8.0 + d}}));
  }
  nlohmann::json rep;
  const auto m = models::RowOrderModel::train(recs, {}, &rep);
  CHECK(m.predict(recs[0].features, 32) == 4);
  CHECK(m.predict(recs[0].features, 128) == 7);
  CHECK(rep["training_set"]["fixed_order_per_n"] ==
        nlohmann::json{{"32", "lpt"}, {"128", "hybrid1"}});
  CHECK(rep["test"]["fixed_per_n_share_of_oracle_gain"].get<double>() == Approx(1.0));
  CHECK(rep["test"]["predicted_share_of_oracle_gain"].get<double>() == Approx(1.0));

  // The priors travel with the model: the same predictions at the trained Ns and between them.
  testing::TempDir t("sparsetune-row-order-priors");
  models::ModelFile f;
  f.arch = "sm_90";
  const auto paths = m.write(t.path.string(), f);
  const auto booster = nlohmann::json::parse(io::read_file(paths[1]));
  REQUIRE(booster.contains("priors"));
  CHECK(booster["priors"]["lpt"].size() == 2);
  const auto back = models::RowOrderModel::read(paths[0]);
  for (std::int64_t n : {16, 32, 64, 128, 512}) {
    const auto p = m.predict_log_ratio(recs[0].features, n),
               q = back.predict_log_ratio(recs[0].features, n);
    for (std::size_t k = 0; k < p.size(); ++k) CHECK(q[k] == Approx(p[k]).margin(1e-6));
  }
  // A prior that is not a pair is named.
  auto j = booster;
  j["priors"]["lpt"][0] = {5.0};
  io::write_file_atomic(paths[1], j.dump());
  CHECK_THROWS_WITH(models::RowOrderModel::read(paths[0]),
                    Catch::Contains("priors") && Catch::Contains("lpt"));
}

TEST_CASE("the best fixed order per N joins the classes, and the rounds are cross-validated",
          "[models][row-order]") {
  // At N = 32, LPT (4) runs 1.3x on every third matrix and 1/1.1x on the others; plain (2) runs
  // 1.05x on all. LPT adds most to the oracle (a third of log 1.3 against log 1.05), so the two
  // greedy classes are the original and LPT; plain has the better mean (log 1.05 against
  // (log 1.3 - 2 log 1.1) / 3), so it is the best fixed order. The features are alike: nothing
  // tells the matrices apart, and the model must answer plain.
  std::vector<models::RowOrderRecord> recs;
  for (int i = 0; i < 30; ++i)
    recs.push_back(timed("m" + std::to_string(i), 32,
                         {{2, 10.0 / 1.05}, {4, i % 3 == 0 ? 10.0 / 1.3 : 10.0 * 1.1}}));
  models::RowOrderTrainOptions o;
  o.classes = 2;
  nlohmann::json rep;
  const auto m = models::RowOrderModel::train(recs, o, &rep);
  const auto& ts = rep["training_set"];
  CHECK(ts["fixed_order_per_n"] == nlohmann::json{{"32", "plain"}});
  REQUIRE(ts["classes"].size() == 3);
  CHECK(ts["classes"][1]["order"] == "lpt");
  CHECK(ts["classes"][2]["order"] == "plain");
  // Its entry gives the training oracle with it in: plain raises it where LPT is slower, from
  // the original order's time there to 1.05x.
  CHECK(ts["classes"][2]["train_oracle_speedup"].get<double>() >
        ts["classes"][1]["train_oracle_speedup"].get<double>() * 1.01);
  CHECK(m.predict(recs[0].features, 32) == 2);
  // Boosting cannot split alike features, but each leaf is the class-weighted mean of the
  // residuals, which the matrices where LPT is best pull towards LPT: with any rounds the picks
  // turn to LPT and lose. The folds see it and keep the priors alone.
  REQUIRE(ts.contains("rounds_selection"));
  CHECK(ts["rounds_selection"]["rounds"] == 0);
  const auto& shares = ts["rounds_selection"]["share_of_oracle_log_gain_by_rounds"];
  CHECK(shares.size() == o.rounds_grid.size());
  // With the priors alone every training record keeps log 1.05 of its oracle's gain, which is
  // log 1.3 where LPT is best and log 1.05 elsewhere.
  const auto test = rep["split"]["test"].get<std::vector<std::string>>();
  double kept = 0, oracle = 0;
  for (int i = 0; i < 30; ++i)
    if (std::find(test.begin(), test.end(), "m" + std::to_string(i)) == test.end()) {
      kept += std::log(1.05);
      oracle += i % 3 == 0 ? std::log(1.3) : std::log(1.05);
    }
  CHECK(shares["0"].get<double>() == Approx(kept / oracle));
  for (const auto& [rounds, share] : shares.items()) {
    INFO(rounds << " rounds");
    CHECK(share.get<double>() <= shares["0"].get<double>() + 1e-9);
  }
  // Without the folds, the rounds given are the rounds used.
  o.inner_folds = 0;
  o.xgb.rounds = 7;
  nlohmann::json plain;
  models::RowOrderModel::train(recs, o, &plain);
  CHECK_FALSE(plain["training_set"].contains("rounds_selection"));
}
