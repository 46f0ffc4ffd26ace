// tune --budget 0 with a learned model: a current one ranks (and says so), a stale one is left
// for the cost model.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "db/db_export.hpp"
#include "models/predictors.hpp"
#include "search/tune.hpp"
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
