// tune --budget 0 with a learned model: a current one ranks (and says so), a stale one is left
// for the cost model.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "db/db_export.hpp"
#include "features/matrix_features.hpp"
#include "graph/graph.hpp"
#include "models/predictors.hpp"
#include "search/learned_evaluator.hpp"
#include "search/tune.hpp"
#include "search_test_util.hpp"
#include "test_support.hpp"

using namespace sparsetune;
namespace fs = std::filesystem;

namespace {

search::TuneOptions options(const testing::TempDir& t, const std::string& models_dir) {
  search::TuneOptions o;
  o.matrix = std::string(SPARSETUNE_SHARED_DIR) + "/matrices/494_bus.mtx.gz";
  o.out_dir = (t.path / "out").string();
  o.db_path = (t.path / "tuning.db").string();
  o.budget_s = 0;
  o.max_candidates = 12;
  o.use_gpu = false;
  o.models_dir = models_dir;
  return o;
}

}  // namespace

TEST_CASE("tune --budget 0 ranks by a current learned model, and not by a stale one", "[search]") {
  testing::TempDir t("sparsetune-learned-tune");
  const auto db =
      db::open_database(std::string(SPARSETUNE_TEST_DATA_DIR) + "/spmv-rank-fixture.json.gz");
  models::TrainOptions to;
  to.out_dir = (t.path / "models").string();
  models::train_spmv_rank(*db, to);

  const auto r = search::tune(options(t, to.out_dir));
  CHECK_THAT(r.report["search"]["ranked_by"].get<std::string>(), Catch::Contains("spmv-rank"));
  CHECK_THAT(r.report["device"].get<std::string>(), Catch::StartsWith("model:spmv-rank/sm_90/"));
  CHECK(r.report["measured"] == false);

  // The same model with a feature renamed: stale, so the cost model ranks.
  const auto desc = (t.path / "models" / "sm_90" / "spmv-rank.json").string();
  nlohmann::json j;
  std::ifstream(desc) >> j;
  j["features"][0] = "alphasparse.not_a_feature";
  std::ofstream(desc) << j.dump();
  auto o = options(t, to.out_dir);
  o.db_path = (t.path / "second.db").string();
  const auto s = search::tune(o);
  CHECK(s.report["search"]["ranked_by"] == "the cost model");
  CHECK(s.report["device"] == "cost-model");

  // No model for the architecture at all: the cost model too.
  o.db_path = (t.path / "third.db").string();
  o.arch = "sm_80";
  CHECK(search::tune(o).report["search"]["ranked_by"] == "the cost model");
}

TEST_CASE(
    "a predict-only learned ranking designs on a sample and still refuses what the "
    "Designer refuses",
    "[search]") {
  testing::TempDir t("sparsetune-learned-eval");
  const auto db =
      db::open_database(std::string(SPARSETUNE_TEST_DATA_DIR) + "/spmv-rank-fixture.json.gz");
  models::TrainOptions to;
  to.out_dir = (t.path / "models").string();
  models::train_spmv_rank(*db, to);
  std::string why;
  const auto ranker = models::SpmvRanker::find(to.out_dir, "sm_90", &why);
  REQUIRE(ranker);

  // Large enough (about 600k entries) that the design check takes a sample.
  const Csr64 a = search_test::irregular(200'000);
  REQUIRE(a.nnz() > 4 * search::kDesignCheckNnz);
  const auto feats = features::feature_row(features::matrix_features(a));
  const models::MatrixInputs m{feats, "f64", a.rows, a.cols, a.nnz()};

  auto graph = [](nlohmann::json ops) {
    return graph::graph_from_json({{"format", "sparsetune-graph"},
                                   {"version", 1},
                                   {"name", "g"},
                                   {"op", "spmv"},
                                   {"ops", std::move(ops)}});
  };
  std::vector<search::Candidate> batch(2);
  // CSR-vector: designs anywhere.
  batch[0].graph = graph(nlohmann::json::array({{{"op", "COMPRESS"}},
                                                {{"op", "BMW_ROW_BLOCK"}, {"rows", 1}},
                                                {{"op", "SET_RESOURCES"}, {"threads", 128}},
                                                {{"op", "THREAD_TOTAL_RED"}},
                                                {{"op", "WARP_TOTAL_RED"}}}));
  // Four entries per thread summed as one row: the rows of 1-5 entries make threads span rows,
  // which the Designer refuses (on the sample as on the whole matrix).
  batch[1].graph = graph(nlohmann::json::array({{{"op", "COMPRESS"}},
                                                {{"op", "BMT_NNZ_BLOCK"}, {"nnz", 4}},
                                                {{"op", "SET_RESOURCES"}, {"threads", 128}},
                                                {{"op", "THREAD_TOTAL_RED"}}}));

  search::LearnedEvaluator sampled(nullptr, *ranker, m, a);
  const auto e = sampled.evaluate(batch);
  REQUIRE(e.size() == 2);
  REQUIRE(e[0].ok);
  CHECK(e[0].time_us == Approx(ranker->predict_us(m, {&batch[0].graph})[0]));
  CHECK_FALSE(e[0].detail.contains("cost_model_us"));
  CHECK(e[0].detail["design_check_rows"].get<std::int64_t>() < a.rows);
  CHECK(e[0].gflops > 0);
  CHECK_FALSE(e[1].ok);
  CHECK_THAT(e[1].failure, Catch::StartsWith("design: ") && Catch::Contains("THREAD_TOTAL_RED"));

  // Through the cost model: the same learned time, the same refusal, and the cost model's time.
  search::CostModelEvaluator cost(a, "f64");
  search::LearnedEvaluator designed(&cost, *ranker, m, a);
  const auto d = designed.evaluate(batch);
  REQUIRE(d[0].ok);
  CHECK(d[0].time_us == Approx(e[0].time_us));
  CHECK(d[0].detail["cost_model_us"].get<double>() > 0);
  CHECK_FALSE(d[1].ok);
}
