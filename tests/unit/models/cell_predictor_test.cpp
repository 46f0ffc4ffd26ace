// LiteForm's two predictors: trained from a database of SpMM tunes in which CELL wins by 1.1x,
// over two column partitions, exactly where the rows' lengths vary (liteform.row_nnz_std above
// 5), and loses, best over one partition, elsewhere; they learn those rules and read back with
// the same answers, and a database without SpMM rows has nothing to give.
#include "models/cell_predictor.hpp"

#include <catch2/catch.hpp>
#include <cmath>

#include "core/fingerprint.hpp"
#include "features/matrix_features.hpp"
#include "graph/cell_graph.hpp"
#include "graph/graph.hpp"
#include "io/matrix_file.hpp"
#include "test_support.hpp"

using namespace sparsetune;

namespace {

const std::vector<std::string> kMatrices = {
    "cora",   "bcsstk21", "can_1072", "dwt_2680", "1138_bus", "494_bus", "EVA",      "rajat01",
    "zenios", "west0479", "olm1000",  "gre_1107", "jagmesh7", "dwt_992", "bcsstk13", "nnc1374"};

db::Measurement row(const std::string& fp, std::int64_t n, const std::string& candidate,
                    const std::string& graph, double us) {
  db::Measurement m;
  m.fingerprint = fp;
  m.op = "spmm";
  m.n = n;
  m.dtype = "f32";
  m.device = "NVIDIA H100 80GB HBM3";
  m.arch = "sm_90";
  m.candidate = candidate;
  m.graph = graph;
  m.time_us = us;
  return m;
}

void fill(db::TuningDb& db) {
  const std::string csr = R"({"ops": [{"op": "COMPRESS"}, {"op": "COL_TILE"}]})";
  for (const auto& name : kMatrices) {
    const Csr64 a =
        io::read_matrix(std::string(SPARSETUNE_SHARED_DIR) + "/matrices/" + name + ".mtx.gz");
    const auto f = features::feature_row(features::matrix_features(a));
    const std::string fp = fingerprint(a);
    db.put_matrix({fp, name, a.rows, a.cols, a.nnz(), f.dump()});
    const bool wins = f["liteform.row_nnz_std"].get<double>() > 5;
    for (std::int64_t n : {32, 128}) {
      // CELL over one and two column partitions: two win where CELL wins, one elsewhere.
      graph::CellGraphOptions two;
      two.partitions = 2;
      const auto cell1 = graph::graph_to_json(graph::cell_graph(a, n, {})).dump();
      const auto cell2 = graph::graph_to_json(graph::cell_graph(a, n, two)).dump();
      REQUIRE(models::is_cell_graph(cell1));
      db.add(row(fp, n, "graph/cell1-" + std::to_string(n), cell1, wins ? 12.0 : 20.0));
      db.add(row(fp, n, "graph/cell2-" + std::to_string(n), cell2, wins ? 10.0 : 22.0));
      db.add(row(fp, n, "graph/csr" + std::to_string(n), csr, 15.0));
      db.add(row(fp, n, "cusparse/bsr-alg1", "", 30.0));
    }
  }
}

}  // namespace

TEST_CASE("the liteform-cell predictor learns where CELL wins and round trips",
          "[models][liteform]") {
  testing::TempDir t("sparsetune-cell-model");
  db::TuningDb db(t.file("cell.db"));
  fill(db);
  models::TrainOptions o;
  o.out_dir = (t.path / "models").string();
  const auto r = models::find_predictor("liteform-cell").train(db, o);
  REQUIRE(r.files.size() == 3);
  const auto& train = r.report["train"];
  CHECK(train["accuracy"].get<double>() == Approx(1.0));
  CHECK(train["cell_wins"].get<int>() > 0);
  CHECK(train["cell_wins"].get<int>() < train["cases"].get<int>());
  const auto& test = r.report["test"];
  REQUIRE(test["cases"].get<int>() >= 4);  // both N of each held-out matrix
  for (const auto& c : test["per_case"]) {
    // Labels as the rule makes them: 1.1x over CSR (15 us) and BSR (30 us).
    CHECK(c["cell_wins"].get<bool>() == (c["cell_us"].get<double>() == 10.0));
    CHECK(c["probability"].get<double>() >= 0.0);
    CHECK(c["probability"].get<double>() <= 1.0);
  }

  const auto back = models::CellPredictor::read(r.files.front());
  std::string why;
  const auto found = models::CellPredictor::find((t.path / "models").string(), "sm_90", &why);
  REQUIRE(found);
  const Csr64 a = io::read_matrix(std::string(SPARSETUNE_SHARED_DIR) + "/matrices/cora.mtx.gz");
  const auto f = features::feature_row(features::matrix_features(a));
  CHECK(back.probability(f, 32) == found->probability(f, 32));
  CHECK_THROWS_WITH(back.probability(nlohmann::json::object(), 32),
                    Catch::Contains("no feature 'liteform."));
}

TEST_CASE("liteform-cell has nothing to learn without SpMM tunes", "[models][liteform]") {
  testing::TempDir t("sparsetune-cell-none");
  db::TuningDb db(t.file("empty.db"));
  CHECK_THROWS_AS(models::train_liteform_cell(db, {}), models::NothingToLearn);
}

TEST_CASE("the liteform-partitions predictor learns the best partition count",
          "[models][liteform]") {
  testing::TempDir t("sparsetune-partitions-model");
  db::TuningDb db(t.file("cell.db"));
  fill(db);
  models::TrainOptions o;
  o.out_dir = (t.path / "models").string();
  const auto r = models::find_predictor("liteform-partitions").train(db, o);
  REQUIRE(r.files.size() == 3);
  const auto& train = r.report["train"];
  CHECK(train["accuracy"].get<double>() == Approx(1.0));
  CHECK(train["similarity"].get<double>() == Approx(1.0));
  CHECK(train["cosine_similarity"].get<double>() == Approx(1.0));
  const auto& test = r.report["test"];
  REQUIRE(test["cases"].get<int>() >= 4);
  double sim = 0;
  for (const auto& c : test["per_case"]) {
    const int p = c["best"], q = c["predicted"];
    CHECK((p == 1 || p == 2));
    sim += 1.0 - std::abs(p - q) / static_cast<double>(std::max(p, q));  // eq. (1) by hand
  }
  CHECK(test["similarity"].get<double>() == Approx(sim / test["per_case"].size()));
  const auto back = models::PartitionPredictor::read(r.files.front());
  const Csr64 a = io::read_matrix(std::string(SPARSETUNE_SHARED_DIR) + "/matrices/EVA.mtx.gz");
  const auto f = features::feature_row(features::matrix_features(a));
  std::string why;
  const auto found = models::PartitionPredictor::find((t.path / "models").string(), "sm_90", &why);
  REQUIRE(found);
  CHECK(back.predict(f, 128) == found->predict(f, 128));
  // One partition count only: nothing to choose between.
  db::TuningDb one(t.file("one.db"));
  CHECK_THROWS_AS(models::train_liteform_partitions(one, {}), models::NothingToLearn);
}
