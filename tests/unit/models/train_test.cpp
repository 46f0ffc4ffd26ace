// `train` end to end on the committed fixture (a JSON export of twelve matrices measured on an
// H100): the model is written, reads back, and its report holds the split and the scores.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "db/db_export.hpp"
#include "models/model_file.hpp"
#include "models/predictors.hpp"
#include "models/spmv_rank_features.hpp"
#include "models/spmv_ranker.hpp"
#include "models/training_set.hpp"
#include "test_support.hpp"

using namespace sparsetune;

namespace {
const std::string kFixture = std::string(SPARSETUNE_TEST_DATA_DIR) + "/spmv-rank-fixture.json.gz";
}

TEST_CASE("train spmv-rank on the fixture: files, split and scores", "[models]") {
  testing::TempDir t("sparsetune-train-test");
  const auto db = db::open_database(kFixture);
  const auto set = models::read_spmv_training_set(*db);
  REQUIRE(set.matrices.size() == 12);
  CHECK(set.arch == "sm_90");

  models::TrainOptions o;
  o.out_dir = (t.path / "models").string();
  o.created = "2026-11-24";
  o.database = "fixture";
  const auto r = models::find_predictor("spmv-rank").train(*db, o);
  REQUIRE(r.files.size() == 4);  // description, booster, level booster, report
  for (const auto& f : r.files) CHECK(std::filesystem::exists(f));

  const auto& rep = r.report;
  CHECK(rep["arch"] == "sm_90");
  CHECK(rep["created"] == "2026-11-24");
  const auto& split = rep["split"];
  const int train_n = split["train_matrices"], test_n = split["test_matrices"];
  CHECK(train_n + test_n == 12);
  CHECK(test_n >= 2);
  // The test matrices are exactly the ones scored on the test side, none of them trained on.
  std::set<std::string> test(split["test"].begin(), split["test"].end());
  CHECK(test.size() == static_cast<std::size_t>(test_n));
  for (const auto& m : rep["test_per_matrix"]) CHECK(test.count(m["matrix"]));
  for (const char* part : {"train", "test"}) {
    const double share = rep[part]["geomean_share_of_oracle"];
    CHECK(share > 0);
    CHECK(share <= 1);
    CHECK(rep[part]["top1_accuracy"] >= 0);
    CHECK(rep[part]["mse"] >= 0);
  }
  CHECK(rep["cross_validation"]["settings"].size() == 3);

  // The written model reads back as current and ranks every fixture matrix's candidates.
  const auto ranker = models::SpmvRanker::read(r.files.front());
  CHECK(ranker.file().training_set["fingerprint"] == set.fingerprint);
  CHECK(ranker.file().created == "2026-11-24");
  const auto& m = set.matrices.front();
  std::vector<const graph::Graph*> graphs;
  for (const auto& s : m.samples) graphs.push_back(&s.graph);
  const auto p = ranker.predict_us({m.features, m.dtype, m.rows, m.cols, m.nnz}, graphs);
  REQUIRE(p.size() == m.samples.size());
  for (double us : p) CHECK(us > 0);
  CHECK(ranker.file().kind == models::kRelativeRankKind);

  // The ranking booster learns times relative to each matrix's fastest; the level booster puts
  // them back on the clock. Over the training matrices the predicted time of each one's fastest
  // candidate lands near the measured one, which the floor alone does not.
  const std::set<std::string> held(split["test"].begin(), split["test"].end());
  double err = 0, floor_err = 0;
  int n = 0;
  for (const auto& mm : set.matrices) {
    if (held.count(mm.matrix)) continue;
    const auto fastest =
        std::min_element(mm.samples.begin(), mm.samples.end(),
                         [](const auto& a, const auto& b) { return a.time_us < b.time_us; });
    const auto q =
        ranker.predict_us({mm.features, mm.dtype, mm.rows, mm.cols, mm.nnz}, {&fastest->graph});
    err += std::abs(std::log(q[0] / fastest->time_us));
    floor_err += std::abs(
        std::log(models::spmv_floor_us(mm.rows, mm.cols, mm.nnz, mm.dtype) / fastest->time_us));
    ++n;
  }
  REQUIRE(n >= 6);
  CHECK(err / n < 0.35);
  CHECK(floor_err / n > 1.0);
  CHECK(rep["level_mse"]["train"] >= 0);
  CHECK(rep["level_mse"]["test"] >= 0);

  // The same data and seed train the same model.
  models::TrainOptions again = o;
  again.out_dir = (t.path / "again").string();
  const auto r2 = models::find_predictor("spmv-rank").train(*db, again);
  CHECK(r2.report["test"] == rep["test"]);
}

TEST_CASE("train spmm-rank on the shipped SpMM rows: a set per (matrix, n), split by matrix",
          "[models]") {
  const auto db =
      db::open_database(std::string(SPARSETUNE_CONFIG_DIR) + "/models/sm_90/spmm-labels.json.gz");
  const auto set = models::read_spmm_training_set(*db);
  REQUIRE(set.matrices.size() >= 8);
  std::map<std::string, std::set<std::int64_t>> ns;
  for (const auto& m : set.matrices) {
    CHECK(m.name.size() > 4);
    CHECK(m.name == m.matrix + " n=" + std::to_string(m.n));
    ns[m.fingerprint].insert(m.n);
  }
  CHECK(std::any_of(ns.begin(), ns.end(), [](const auto& x) { return x.second.size() == 2; }));
  // No SpMV rows there: that ranking has nothing to learn (train --model all skips it).
  CHECK_THROWS_AS(models::find_predictor("spmv-rank").train(*db, {}), models::NothingToLearn);

  models::TrainOptions o;
  o.database = "spmm-labels";
  const auto r = models::find_predictor("spmm-rank").train(*db, o);
  CHECK(r.files.empty());  // no out_dir: nothing written
  const auto& rep = r.report;
  CHECK(rep["model"] == "spmm-rank");
  // A matrix's n go to one side: every test case's matrix is a test matrix, and none is trained.
  std::set<std::string> test(rep["split"]["test"].begin(), rep["split"]["test"].end());
  std::set<std::string> test_fp;
  const auto base = [](const std::string& name) { return name.substr(0, name.rfind(" n=")); };
  for (const auto& m : set.matrices)
    if (test.count(m.matrix)) test_fp.insert(m.fingerprint);
  CHECK(test_fp.size() == test.size());  // the list names matrices, each once
  for (const auto& m : rep["test_per_matrix"]) CHECK(test.count(base(m["matrix"])) == 1);
  CHECK(rep["test"]["geomean_share_of_oracle"] > 0);
  CHECK(rep["test"]["geomean_share_of_oracle"] <= 1);
}

TEST_CASE("train refuses a database with nothing to learn from, naming it", "[models]") {
  testing::TempDir t("sparsetune-train-test");
  db::TuningDb empty(t.file("empty.db"));
  models::TrainOptions o;
  CHECK_THROWS_WITH(models::train_spmv_rank(empty, o), Catch::Contains("empty.db"));
  CHECK_THROWS_WITH(models::find_predictor("nope"), Catch::Contains("spmv-rank"));
}

TEST_CASE("train requests a predictor cannot serve are refused, naming those that can",
          "[models]") {
  models::TrainOptions o;
  CHECK_NOTHROW(models::check_train_request("spmv-rank", o, true));
  CHECK_NOTHROW(models::check_train_request("all", o, false));
  o.bag = 3;
  CHECK_NOTHROW(models::check_train_request("spmm-rank", o, false));
  CHECK_NOTHROW(
      models::check_train_request("all", o, false));  // the rankings and slice-gcn bag, others not
  CHECK_THROWS_WITH(
      models::check_train_request("crux", o, false),
      "train --bag averages the models of spmv-rank, spmm-rank or slice-gcn, not 'crux'");
  o.bag = 1;
  CHECK_NOTHROW(models::check_train_request("liteform-cell", o, true));
  CHECK_NOTHROW(models::check_train_request("row-order", o, true));
  CHECK_THROWS_WITH(models::check_train_request("slice-gcn", o, true),
                    Catch::Contains("slice-gcn train --holdout-like"));
  CHECK_THROWS_WITH(models::check_train_request("all", o, true),
                    "train --holdout-like needs one model named by --model (spmv-rank, spmm-rank, "
                    "crux, liteform-cell, liteform-partitions or row-order), not 'all'");
  CHECK_THROWS_WITH(models::check_train_request("nope", o, false),
                    Catch::Contains("no predictor named 'nope'"));
}

TEST_CASE("a models folder is named by an architecture, never by a path", "[models]") {
  using models::arch_dir;
  CHECK(arch_dir("m", "sm_90") == "m/sm_90");
  CHECK(arch_dir("m", "sm_100a") == "m/sm_100a");
  for (const char* bad : {"../../evil", "sm_90/..", "", "sm_", "sm_9", "/tmp", "sm_90b"})
    CHECK_THROWS_WITH(arch_dir("m", bad), Catch::Contains("is not an architecture name"));
  CHECK_THROWS_AS(models::model_path("m", "../x", "spmv-rank"), Error);
}
