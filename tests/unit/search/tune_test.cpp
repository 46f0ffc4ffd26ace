#include "search/tune.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/fingerprint.hpp"
#include "db/tuning_db.hpp"
#include "features/matrix_features.hpp"
#include "graph/crux_graph.hpp"
#include "graph/format.hpp"
#include "io/matrix_file.hpp"
#include "models/predictors.hpp"
#include "search_test_util.hpp"
#include "test_support.hpp"

using namespace sparsetune;
namespace fs = std::filesystem;

namespace {

search::TuneOptions options(const testing::TempDir& t, const std::string& matrix) {
  search::TuneOptions o;
  o.matrix = matrix;
  o.out_dir = (t.path / "out").string();
  o.db_path = (t.path / "tuning.db").string();
  o.budget_s = 0;
  o.max_candidates = 12;
  o.use_gpu = false;
  return o;
}

const std::string kMatrix = std::string(SPARSETUNE_SHARED_DIR) + "/matrices/494_bus.mtx.gz";

}  // namespace

TEST_CASE("tune --budget 0 emits the four files and says nothing was measured", "[search]") {
  testing::TempDir t("sparsetune-tune-test");
  const auto r = search::tune(options(t, kMatrix));
  for (const char* f : {"format.safetensors", "kernel.cu", "kernel.h", "report.json"})
    CHECK(fs::file_size(t.path / "out" / f) > 0);
  std::ifstream in(t.path / "out" / "report.json");
  const auto j = nlohmann::json::parse(in);
  CHECK(j["measured"] == false);
  CHECK(j["measurement_note"].get<std::string>().find("nothing was measured") != std::string::npos);
  CHECK(j["error"].is_null());
  CHECK(j["cusparse"].is_null());
  CHECK(j["matrix"]["nnz"] == 1666);
  CHECK(j["cpu_check"]["error"].get<double>() <= j["cpu_check"]["tolerance"].get<double>());
  // The format's build time is reported; its break-even needs measured times.
  CHECK(j["format_build"]["ms"].get<double>() > 0);
  CHECK(j["format_build"]["break_even_calls"].is_null());
  CHECK(j["search"]["candidates"] == 12);
  CHECK(j["search"]["from_database"] == false);
  CHECK(j["gflops"].get<double>() > 0);
  CHECK(j["features"]["alphasparse"]["rows"] == 494);
  // The format binary reads back and is the matrix's.
  const auto f = graph::read_format((t.path / "out" / "format.safetensors").string());
  CHECK(f.nnz == 1666);
  CHECK(f.fingerprint == j["matrix"]["fingerprint"]);
  // No temporary files left behind.
  for (const auto& e : fs::directory_iterator(t.path / "out"))
    CHECK(e.path().filename().string().find("tmp") == std::string::npos);
}

TEST_CASE("with a budget, SpMV's search ends with the crux search, recorded like the rest",
          "[search][crux]") {
  testing::TempDir t("sparsetune-tune-crux");
  auto o = options(t, kMatrix);
  o.budget_s = 30;
  o.max_candidates = 0;
  const auto r = search::tune(o);
  const auto& crux = r.report["search"]["crux"];
  REQUIRE(crux.is_object());
  // The cost model scores every point here: the six first points at least, at most 20, each
  // with a hot part twice (the hot part holding the crux, and holding its rows whole).
  CHECK(crux["points"].get<int>() >= 6);
  CHECK(crux["points"].get<int>() <= 20);
  CHECK(crux["evaluations"].get<int>() > crux["points"].get<int>());
  CHECK(crux["evaluations"].get<int>() <= 2 * crux["points"].get<int>());
  CHECK(crux["failed"].get<int>() < crux["evaluations"].get<int>());
  CHECK(crux["best_tau_r"].get<double>() <= crux["best_tau_c"].get<double>());
  // Every crux point is a row of the database, a CRUX_SPLIT graph with the crux search as its
  // origin (the main search may reach CRUX_SPLIT graphs too, from the crux seeds).
  int crux_rows = 0;
  for (const auto& m : db::TuningDb(o.db_path).measurements())
    if (nlohmann::json::parse(m.params).value("origin", "") == "crux") {
      CHECK(m.graph.find("CRUX_SPLIT") != std::string::npos);
      ++crux_rows;
    }
  CHECK(crux_rows == crux["evaluations"].get<int>());
  SECTION("none when asked for none") {
    o.crux_evaluations = 0;
    o.force = true;
    CHECK_FALSE(search::tune(o).report["search"].contains("crux"));
  }
}

TEST_CASE("tune --dtype f16: fp16 values, the crux on m16n8k8, and values fp16 cannot hold",
          "[search][crux]") {
  testing::TempDir t("sparsetune-tune-f16");
  auto o = options(t, kMatrix);
  o.dtype = "f16";
  o.budget_s = 30;
  o.max_candidates = 0;
  const auto r = search::tune(o);
  CHECK(r.report["dtype"] == "f16");
  CHECK(r.report["cpu_check"]["error"].get<double>() <= 1e-2);
  CHECK(graph::read_format((t.path / "out" / "format.safetensors").string()).dtype == "f16");
  int f16_mma = 0;
  for (const auto& m : db::TuningDb(o.db_path).measurements()) {
    CHECK(m.dtype == "f16");
    f16_mma += m.graph.find("TC_MMA_F16") != std::string::npos;
  }
  CHECK(f16_mma == r.report["search"]["crux"]["evaluations"].get<int>());
  // 70000 is past fp16's largest value (65504): refused, naming the range, before any search.
  const auto big = t.file("big.mtx");
  Csr64 a;
  a.rows = a.cols = 2;
  a.row_ptr = {0, 1, 2};
  a.col_idx = {0, 1};
  a.val = {1.0, 70000.0};
  io::write_matrix(big, a);
  o.matrix = big;
  REQUIRE_THROWS_WITH(search::tune(o), Catch::Contains("exceed fp16's range (65504)"));
  // SpMM refuses it alike, naming the file, before anything is written.
  o.op = "spmm";
  o.n = 8;
  o.out_dir = (t.path / "big-spmm").string();
  REQUIRE_THROWS_WITH(search::tune(o),
                      Catch::Contains(big) && Catch::Contains("exceed fp16's range (65504)"));
  CHECK_FALSE(fs::exists(t.path / "big-spmm"));
  // 65504 itself is fp16's largest value: tuned.
  a.val = {1.0, -65504.0};
  io::write_matrix(big, a);
  o.budget_s = 0;
  o.max_candidates = 4;
  CHECK(search::tune(o).report["dtype"] == "f16");
}

TEST_CASE("a second tune answers from the database; --force searches again", "[search]") {
  testing::TempDir t("sparsetune-tune-test");
  auto o = options(t, kMatrix);
  const auto first = search::tune(o);
  const auto rows = db::TuningDb(o.db_path).measurements().size();
  CHECK(rows == 12);  // every scored candidate is a row
  const auto second = search::tune(o);
  CHECK(second.report["search"]["from_database"] == true);
  CHECK(second.report["graph_line"] == first.report["graph_line"]);
  CHECK(db::TuningDb(o.db_path).measurements().size() == rows);  // nothing searched
  o.force = true;
  o.seed = 9;
  const auto third = search::tune(o);
  CHECK(third.report["search"]["from_database"] == false);
  CHECK(third.report["search"]["candidates"] == 12);
}

TEST_CASE("tune refuses what it cannot do, with the reason", "[search]") {
  testing::TempDir t("sparsetune-tune-test");
  auto o = options(t, kMatrix);
  o.op = "spgemm";
  CHECK_THROWS_WITH(search::tune(o), Catch::Contains("--op must be spmv or spmm"));
  o = options(t, kMatrix);
  o.op = "spmm";
  o.n = 0;
  CHECK_THROWS_WITH(search::tune(o), Catch::Contains("--n must be 1 to 1024"));
  o.n = 1025;
  CHECK_THROWS_WITH(search::tune(o), Catch::Contains("--n must be 1 to 1024"));
  o = options(t, kMatrix);
  o.n = 4;
  CHECK_THROWS_WITH(search::tune(o), Catch::Contains("--op spmm only"));
  o = options(t, kMatrix);
  o.dtype = "bf16";
  CHECK_THROWS_WITH(search::tune(o), Catch::Contains("--dtype must be f64, f32 or f16"));
  o = options(t, (t.path / "missing.mtx").string());
  CHECK_THROWS_AS(search::tune(o), Error);
  o = options(t, kMatrix);
  o.config_dir = t.path.string();  // no space.json there
  CHECK_THROWS_WITH(search::tune(o), Catch::Contains("space.json"));
  CHECK_FALSE(fs::exists(t.path / "out"));  // nothing written on failure
}

TEST_CASE("--budget bounds the whole command: the search stops early and says so", "[search]") {
  testing::TempDir t("sparsetune-tune-test");
  const auto matrix = t.file("irregular.mtx");
  io::write_matrix(matrix, search_test::irregular(20000));
  auto o = options(t, matrix);
  o.max_candidates = 0;
  o.budget_s = 1;  // less than the final steps are estimated to take: only the baseline is scored
  const auto r = search::tune(o);
  const auto& s = r.report["search"];
  CHECK(s["stopped_by"] == "budget");
  CHECK(s["candidates"] == 1);
  CHECK(s["note"].get<std::string>().find("--budget") != std::string::npos);
  const auto& w = r.report["wall_budget"];
  CHECK(w["budget_s"] == 1.0);
  CHECK(w["reserved_for_final_s"].get<double>() > 1.0);
  CHECK(w["search_budget_s"].get<double>() < 0.01);
  CHECK(w["wall_s"].get<double>() > 0);  // it ended (ctest's timeout catches a hang)
  CHECK(fs::file_size(t.path / "out" / "kernel.cu") > 0);  // the baseline was emitted

  // A budget with room to spare: the candidate limit ends the search, not the clock.
  o.budget_s = 600;
  o.max_candidates = 6;
  o.force = true;
  const auto r2 = search::tune(o);
  CHECK(r2.report["search"]["stopped_by"] == "max-candidates");
  CHECK(r2.report["search"]["candidates"] == 6);
  CHECK(r2.report["wall_budget"]["search_budget_s"].get<double>() > 500);
}

TEST_CASE("a shipped crux model gives budget 0 a candidate and the crux search its first point",
          "[search][crux]") {
  testing::TempDir t("sparsetune-tune-crux-model");
  // A crux model trained on four matrices' crux searches (best point (0.6, 0.2) everywhere).
  {
    db::TuningDb db(t.file("labels.db"));
    for (const char* name : {"cora", "bcsstk21", "can_1072", "dwt_2680"}) {
      const Csr64 a =
          io::read_matrix(std::string(SPARSETUNE_SHARED_DIR) + "/matrices/" + name + ".mtx.gz");
      const auto f = features::feature_row(features::matrix_features(a));
      db.put_matrix({fingerprint(a), name, a.rows, a.cols, a.nnz(), f.dump()});
      for (const auto& [c, r] : {std::pair{0.6, 0.2}, std::pair{0.0, 0.0}, std::pair{1.0, 1.0}}) {
        db::Measurement m;
        m.fingerprint = fingerprint(a);
        m.op = "spmv";
        m.dtype = "f64";
        m.device = "NVIDIA H100 80GB HBM3";
        m.arch = "sm_90";
        m.graph = graph::graph_to_json(graph::crux_graph(c, r)).dump();
        m.candidate = "graph/" + std::to_string(std::hash<std::string>{}(m.graph));
        m.time_us = c == 0.6 ? 5.0 : 9.0;
        db.add(m);
      }
    }
    models::TrainOptions o;
    o.out_dir = (t.path / "models").string();
    models::find_predictor("crux").train(db, o);
  }
  // cora's rows of up to 169 entries: the crux graphs' warp-per-row cold part is not pruned.
  auto o = options(t, std::string(SPARSETUNE_SHARED_DIR) + "/matrices/cora.mtx.gz");
  o.models_dir = (t.path / "models").string();
  const auto r = search::tune(o);  // budget 0
  const auto& pick = r.report["crux_pick"];
  REQUIRE(pick.contains("tau_c"));
  CHECK(pick["tau_c"].get<double>() == Approx(0.6).margin(0.05));
  CHECK(pick["tau_r"].get<double>() == Approx(0.2).margin(0.05));
  bool seeded = false;
  for (const auto& s : r.report["search"]["seed_order"]) seeded |= s["seed"] == "crux-predicted";
  CHECK(seeded);

  SECTION("with a budget, the crux search starts from the prediction") {
    o.budget_s = 30;
    o.max_candidates = 0;
    o.force = true;
    const auto b = search::tune(o);
    REQUIRE(b.report["search"].contains("crux"));
    // The crux search's first point is the predicted crux (rows are kept in the order scored).
    const auto& p = b.report["crux_pick"];
    bool found = false;
    for (const auto& m : db::TuningDb(o.db_path).measurements()) {
      if (nlohmann::json::parse(m.params).value("origin", "") != "crux") continue;
      const auto split = nlohmann::json::parse(m.graph)["ops"][0];  // {"op": ..., params}
      CHECK(split["tau_c"].get<double>() == Approx(p["tau_c"].get<double>()));
      CHECK(split["tau_r"].get<double>() == Approx(p["tau_r"].get<double>()));
      found = true;
      break;
    }
    CHECK(found);
  }

  SECTION("without a model, the report says why") {
    o.models_dir = (t.path / "none").string();
    o.force = true;
    CHECK_THAT(search::tune(o).report["crux_pick"]["why_not_predicted"].get<std::string>(),
               Catch::Contains("no crux model"));
  }
}
