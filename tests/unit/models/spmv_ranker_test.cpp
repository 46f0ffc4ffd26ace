// The learned SpMV ranking's files: a saved model loads back and predicts the same; a model whose
// format version or feature list differs from the program's is stale and not used.
#include "models/spmv_ranker.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "graph/graph.hpp"
#include "graph/spmm_graph.hpp"
#include "models/spmv_rank_features.hpp"
#include "test_support.hpp"

using namespace sparsetune;

namespace {

graph::Graph graph_of(const std::string& name) {
  return graph::read_graph(std::string(SPARSETUNE_CONFIG_DIR) + "/graphs/" + name + ".json");
}

// A matrix feature row with every feature the model reads (values are arbitrary but varied).
nlohmann::json features(double scale) {
  const auto& names = models::spmv_rank_feature_names();
  nlohmann::json f = nlohmann::json::object();
  for (std::size_t k = 0; names[k] != "dtype_bytes"; ++k)
    f[names[k]] = scale * static_cast<double>(k % 7 + 1);
  return f;
}

// A small model over the ranker's inputs: times that depend on the graph and the matrix.
models::XgbRegressor tiny_model() {
  const std::vector<std::string> seeds = {"csr-vector",   "csr-scalar",   "ell",
                                          "sell-c-sigma", "csr-adaptive", "hyb"};
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (double s : {1.0, 2.0, 3.0})
    for (std::size_t k = 0; k < seeds.size(); ++k) {
      x.push_back(models::spmv_rank_row(features(s), "f64", graph_of(seeds[k]), "test"));
      y.push_back(0.3 * static_cast<double>(k) + 0.1 * s);
    }
  models::XgbRegressor r({30, 3, 0.3, 1.0, 7, 1});
  r.fit(x, y);
  return r;
}

models::ModelFile description() {
  models::ModelFile f;
  f.model = models::kSpmvRankName;
  f.kind = "xgboost-regressor";
  f.op = "spmv";
  f.arch = "sm_90";
  f.features = models::spmv_rank_feature_names();
  f.training_set = {{"fingerprint", "fnv1a-test"}};
  return f;
}

std::vector<std::string> project_names(const std::vector<std::string>& names,
                                       const std::vector<std::size_t>& left_out) {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < names.size(); ++k)
    if (std::find(left_out.begin(), left_out.end(), k) == left_out.end()) out.push_back(names[k]);
  return out;
}

void edit_description(const std::string& path, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j;
  std::ifstream(path) >> j;
  edit(j);
  std::ofstream(path) << j.dump(2);
}

}  // namespace

TEST_CASE("an XGBoost model saved and loaded predicts exactly the same", "[models]") {
  const auto r = tiny_model();
  const std::string bytes = r.save();
  const auto back = models::XgbRegressor::load(bytes, r.width(), "test");
  std::vector<std::vector<double>> q;
  for (const char* g : {"csr-vector", "ell", "dia-hybrid", "segmented-coo"})
    q.push_back(models::spmv_rank_row(features(1.5), "f32", graph_of(g), "test"));
  CHECK(r.predict(q) == back.predict(q));
  CHECK(back.save() == bytes);
  CHECK_THROWS_AS(models::XgbRegressor::load(bytes, r.width() + 1, "test"), Error);
  CHECK_THROWS_WITH(models::XgbRegressor::load("not a model", 3, "broken.json"),
                    Catch::Contains("broken.json"));
}

TEST_CASE("spmv-rank: written, found and read back, it ranks as before", "[models]") {
  testing::TempDir t("sparsetune-ranker-test");
  const auto booster = tiny_model();
  const auto files = models::write_model((t.path / "sm_90").string(), description(), booster,
                                         {{"spmv-rank.report.json", "{}\n"}});
  REQUIRE(files.size() == 3);
  std::string why;
  const auto r = models::SpmvRanker::find(t.path.string(), "sm_90", &why);
  REQUIRE(r);
  CHECK(why.empty());
  const auto a = graph_of("csr-vector"), b = graph_of("sell-c-sigma"), c = graph_of("hyb");
  const models::MatrixInputs m{features(2.0), "f64", 1000, 1000, 5000};
  const auto p = r->predict_us(m, {&a, &b, &c});
  REQUIRE(p.size() == 3);
  // The description's floor times e^(booster's output): the same numbers the booster gives.
  const auto raw = booster.predict({models::spmv_rank_row(m.features, "f64", a, "t"),
                                    models::spmv_rank_row(m.features, "f64", b, "t"),
                                    models::spmv_rank_row(m.features, "f64", c, "t")});
  const double floor = models::spmv_floor_us(1000, 1000, 5000, "f64");
  for (int k = 0; k < 3; ++k) CHECK(p[k] == Approx(floor * std::exp(raw[k])));
  CHECK(p[0] < p[1]);  // trained: the earlier seed is faster
  CHECK_FALSE(models::SpmvRanker::find(t.path.string(), "sm_80", &why));
  CHECK_THAT(why, Catch::Contains("no spmv-rank model for sm_80"));
}

TEST_CASE("spmv-rank: a model trained before inputs were added reads its own, by name",
          "[models]") {
  // Trained without two of this program's inputs (as a model trained before an operator and a
  // parameter were added): its rows are this program's rows without those columns.
  const auto& names = models::spmv_rank_feature_names();
  const std::vector<std::size_t> left_out = {names.size() - 1, names.size() / 2};
  const auto project = [&](const std::vector<double>& row) {
    std::vector<double> r;
    for (std::size_t k = 0; k < row.size(); ++k)
      if (std::find(left_out.begin(), left_out.end(), k) == left_out.end()) r.push_back(row[k]);
    return r;
  };
  const std::vector<std::string> seeds = {"csr-vector", "csr-scalar", "ell", "hyb"};
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (double s : {1.0, 2.0, 3.0})
    for (std::size_t k = 0; k < seeds.size(); ++k) {
      x.push_back(project(models::spmv_rank_row(features(s), "f64", graph_of(seeds[k]), "t")));
      y.push_back(0.3 * static_cast<double>(k) + 0.1 * s);
    }
  models::XgbRegressor booster({30, 3, 0.3, 1.0, 7, 1});
  booster.fit(x, y);
  auto d = description();
  d.features = project_names(names, left_out);
  testing::TempDir t("sparsetune-ranker-test");
  models::write_model((t.path / "sm_90").string(), d, booster);
  std::string why;
  const auto r = models::SpmvRanker::find(t.path.string(), "sm_90", &why);
  REQUIRE(r);
  CHECK(why.empty());
  const auto a = graph_of("csr-vector"), b = graph_of("ell");
  const models::MatrixInputs m{features(2.0), "f64", 1000, 1000, 5000};
  const auto p = r->predict_us(m, {&a, &b});
  const auto raw = booster.predict({project(models::spmv_rank_row(m.features, "f64", a, "t")),
                                    project(models::spmv_rank_row(m.features, "f64", b, "t"))});
  const double floor = models::spmv_floor_us(1000, 1000, 5000, "f64");
  for (int k = 0; k < 2; ++k) CHECK(p[k] == Approx(floor * std::exp(raw[k])));
}

TEST_CASE("spmv-rank, relative kind: the level booster puts the ranking on the clock", "[models]") {
  testing::TempDir t("sparsetune-ranker-test");
  const auto booster = tiny_model();
  // A level over the matrix's inputs alone: 1.0 for the first matrix, 2.0 for the second.
  std::vector<std::vector<double>> lx;
  std::vector<double> ly;
  for (double s : {1.0, 2.0, 3.0}) {
    lx.push_back(models::spmv_rank_matrix_part(features(s), "f64", "t"));
    ly.push_back(s);
  }
  models::XgbRegressor level({30, 3, 0.3, 1.0, 7, 1});
  level.fit(lx, ly);
  REQUIRE(level.width() == models::spmv_rank_matrix_width());
  auto f = description();
  f.kind = models::kRelativeRankKind;
  const auto dir = (t.path / "sm_90").string();
  const auto files = models::write_model(dir, f, booster, {}, &level);
  REQUIRE(files.size() == 3);
  CHECK(std::filesystem::exists(t.path / "sm_90" / "spmv-rank.level.xgb.ubj"));
  std::string why;
  const auto r = models::SpmvRanker::find(t.path.string(), "sm_90", &why);
  INFO(why);
  REQUIRE(r);
  CHECK(r->file().level_booster == "spmv-rank.level.xgb.ubj");
  const auto a = graph_of("csr-vector"), b = graph_of("sell-c-sigma");
  const double floor = models::spmv_floor_us(1000, 1000, 5000, "f64");
  for (double s : {1.0, 2.0}) {
    const models::MatrixInputs m{features(s), "f64", 1000, 1000, 5000};
    const auto p = r->predict_us(m, {&a, &b});
    const auto raw = booster.predict({models::spmv_rank_row(m.features, "f64", a, "t"),
                                      models::spmv_rank_row(m.features, "f64", b, "t")});
    const double l = level.predict({models::spmv_rank_matrix_part(m.features, "f64", "t")})[0];
    CHECK(l == Approx(s).margin(0.1));  // trained: the level is the matrix's
    for (int k = 0; k < 2; ++k) CHECK(p[k] == Approx(floor * std::exp(l + raw[k])));
    CHECK(p[0] < p[1]);  // the level moves both alike: the order is the booster's
  }

  // The kind and the level booster go together, in writing and in reading; a missing level file
  // is named.
  CHECK_THROWS_WITH(models::write_model(dir, description(), booster, {}, &level),
                    Catch::Contains("goes with kind"));
  CHECK_THROWS_WITH(models::write_model(dir, f, booster), Catch::Contains("goes with kind"));
  REQUIRE(models::SpmvRanker::find(t.path.string(), "sm_90", &why));  // nothing was written
  const auto desc = (t.path / "sm_90" / "spmv-rank.json").string();
  edit_description(desc, [](nlohmann::json& j) { j.erase("level_booster"); });
  CHECK_FALSE(models::SpmvRanker::find(t.path.string(), "sm_90", &why));
  CHECK_THAT(why, Catch::Contains("level_booster") && Catch::Contains("required"));
  models::write_model(dir, f, booster, {}, &level);
  edit_description(desc, [](nlohmann::json& j) { j["kind"] = models::kAbsoluteRankKind; });
  CHECK_FALSE(models::SpmvRanker::find(t.path.string(), "sm_90", &why));
  CHECK_THAT(why, Catch::Contains("level_booster") && Catch::Contains("goes only with"));
  models::write_model(dir, f, booster, {}, &level);
  edit_description(desc, [](nlohmann::json& j) { j["level_booster"] = "../elsewhere.json"; });
  CHECK_FALSE(models::SpmvRanker::find(t.path.string(), "sm_90", &why));
  CHECK_THAT(why, Catch::Contains("'level_booster' must be a file name"));
  models::write_model(dir, f, booster, {}, &level);
  std::filesystem::remove(t.path / "sm_90" / "spmv-rank.level.xgb.ubj");
  CHECK_FALSE(models::SpmvRanker::find(t.path.string(), "sm_90", &why));
  CHECK_THAT(why, Catch::Contains("spmv-rank.level.xgb.ubj"));
}

TEST_CASE("spmm-rank: log2(n) is an input, the SpMM floor scales the prediction", "[models]") {
  // Times that grow with n for one graph and not for the other: the ranking flips with n.
  const auto a = graph::as_spmm(graph_of("csr-vector"), 4, 4);
  const auto b = graph::as_spmm(graph_of("csr-scalar"), 4, 4);
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (double s : {1.0, 2.0})
    for (std::int64_t n : {1, 4, 32, 128, 512}) {
      const double l = std::log2(static_cast<double>(n));
      for (const auto* g : {&a, &b}) {
        x.push_back(models::spmm_rank_matrix_part(features(s), "f32", n, "t"));
        models::append_graph_part(x.back(), *g);
        y.push_back(g == &a ? 0.5 : 0.1 * l);
      }
    }
  models::XgbRegressor booster({40, 3, 0.3, 1.0, 7, 1});
  booster.fit(x, y);
  auto f = description();
  f.model = models::kSpmmRankName;
  f.op = "spmm";
  f.features = models::spmm_rank_feature_names();
  testing::TempDir t("sparsetune-ranker-test");
  models::write_model((t.path / "sm_90").string(), f, booster);
  std::string why;
  CHECK_FALSE(models::SpmvRanker::find(t.path.string(), "sm_90", &why));  // no spmv-rank there
  const auto r = models::SpmvRanker::find(t.path.string(), "sm_90", &why, models::kSpmmRankName);
  INFO(why);
  REQUIRE(r);
  CHECK(r->spmm());
  // The feature list is SpMV's with log2_n after the value type.
  const auto& names = models::spmm_rank_feature_names();
  REQUIRE(names.size() == models::spmv_rank_feature_names().size() + 1);
  const auto at = std::find(names.begin(), names.end(), "log2_n");
  REQUIRE(at != names.end());
  CHECK(*(at - 1) == "dtype_bytes");
  for (std::int64_t n : {4, 512}) {
    const models::MatrixInputs m{features(1.0), "f32", 1000, 800, 5000, n};
    const auto p = r->predict_us(m, {&a, &b});
    const double floor = models::spmm_floor_us(1000, 800, 5000, n, "f32");
    CHECK(floor == Approx((1001.0 * 4 + 5000.0 * 8 + 1800.0 * n * 4) / 3000e9 * 1e6));
    auto row = models::spmm_rank_matrix_part(m.features, "f32", n, "t");
    models::append_graph_part(row, a);
    CHECK(p[0] == Approx(floor * std::exp(booster.predict({row})[0])));
    // Few columns: csr-scalar (0.1 log2 n) is faster; many: csr-vector (0.5).
    CHECK((p[1] < p[0]) == (n == 4));
  }
  CHECK_THROWS_WITH(models::spmm_rank_matrix_part(features(1.0), "f32", 0, "m.mtx"),
                    Catch::Contains("m.mtx") && Catch::Contains("n of 1 or more"));
  // Without the training sizes in its description every matrix is in range; with them, a matrix
  // below half the smallest or above twice the largest is not.
  CHECK(r->outside_training(1).empty());
  f.training_set["nnz_min"] = 1000;
  f.training_set["nnz_max"] = 5000;
  models::write_model((t.path / "sm_90").string(), f, booster);
  const auto ranged =
      models::SpmvRanker::find(t.path.string(), "sm_90", &why, models::kSpmmRankName);
  REQUIRE(ranged);
  CHECK(ranged->outside_training(500).empty());
  CHECK(ranged->outside_training(10000).empty());
  CHECK_THAT(ranged->outside_training(499), Catch::Contains("1000 to 5000 entries, not 499"));
  CHECK_FALSE(ranged->outside_training(10001).empty());
}

TEST_CASE("spmv-rank: a stale or broken model is not used, and why is said", "[models]") {
  testing::TempDir t("sparsetune-ranker-test");
  const auto dir = (t.path / "sm_90").string();
  const auto desc = (t.path / "sm_90" / "spmv-rank.json").string();
  const auto booster = tiny_model();
  std::string why;

  models::write_model(dir, description(), booster);
  edit_description(desc, [](nlohmann::json& j) { j["format_version"] = 99; });
  CHECK_FALSE(models::SpmvRanker::find(t.path.string(), "sm_90", &why));
  CHECK_THAT(why, Catch::Contains("stale") && Catch::Contains("format version 99"));

  models::write_model(dir, description(), booster);
  edit_description(desc, [](nlohmann::json& j) { j["features"][3] = "alphasparse.renamed"; });
  CHECK_FALSE(models::SpmvRanker::find(t.path.string(), "sm_90", &why));
  CHECK_THAT(why, Catch::Contains("reads feature 'alphasparse.renamed', which this program lacks"));

  models::write_model(dir, description(), booster);
  // A description that names fewer inputs than its booster reads.
  edit_description(desc, [](nlohmann::json& j) { j["features"].erase(j["features"].size() - 1); });
  CHECK_FALSE(models::SpmvRanker::find(t.path.string(), "sm_90", &why));
  CHECK_THAT(why, Catch::Contains("values, expected"));

  models::write_model(dir, description(), booster);
  std::ofstream((t.path / "sm_90" / "spmv-rank.xgb.ubj").string()) << "{truncated";
  CHECK_FALSE(models::SpmvRanker::find(t.path.string(), "sm_90", &why));
  CHECK_THAT(why, Catch::Contains("spmv-rank.xgb.ubj"));

  std::ofstream(desc) << "{\"format\": \"sparsetune-model\"}";
  CHECK_FALSE(models::SpmvRanker::find(t.path.string(), "sm_90", &why));
  CHECK_THAT(why, Catch::Contains("format_version"));
  CHECK_THROWS_WITH(models::SpmvRanker::read(desc), Catch::Contains(desc));
}

TEST_CASE("the shipped sm_90 SpMM ranking is current for this program", "[models]") {
  //   sparsetune train --model spmm-rank --db configs/models/sm_90/spmm-labels.json.gz
  std::string why;
  const auto r = models::SpmvRanker::find(std::string(SPARSETUNE_CONFIG_DIR) + "/models", "sm_90",
                                          &why, models::kSpmmRankName);
  INFO(why);
  REQUIRE(r);
  CHECK(r->spmm());
  CHECK(r->file().op == "spmm");
  // Ranked by time relative to each (matrix, n)'s fastest, with the level beside it.
  CHECK(r->file().kind == models::kRelativeRankKind);
  CHECK_FALSE(r->file().level_booster.empty());
}

TEST_CASE("the shipped sm_90 model is current for this program", "[models]") {
  // A change of the features or operators makes it stale (tune would fall back to the cost
  // model); retrain it from the rows shipped beside it:
  //   sparsetune train --db configs/models/sm_90/training-data.json.gz
  std::string why;
  const auto r =
      models::SpmvRanker::find(std::string(SPARSETUNE_CONFIG_DIR) + "/models", "sm_90", &why);
  INFO(why);
  REQUIRE(r);
  CHECK(r->file().arch == "sm_90");
  CHECK(r->file().split.contains("test"));
}
