// tune on a GPU: verified kernels and a report for shared matrices; a planted faulty candidate
// (a crash of the worker) fails only itself. The worker is this test binary itself (see
// gpu_main.cpp).
#include "search/tune.hpp"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "db/tuning_db.hpp"
#include "features/matrix_features.hpp"
#include "io/matrix_file.hpp"
#include "search/engine.hpp"
#include "search/gpu_evaluator.hpp"
#include "test_support.hpp"

using namespace sparsetune;
namespace fs = std::filesystem;

namespace {

runtime::WorkerLaunch self_launch() { return {{"/proc/self/exe", runtime::kWorkerSubcommand}}; }

}  // namespace

TEST_CASE("tune on shared matrices gives verified kernels and a report", "[gpu]") {
  for (const char* name : {"494_bus", "dwt_2680", "nnc1374"}) {
    testing::TempDir t("sparsetune-gpu-tune");
    search::TuneOptions o;
    o.matrix = testing::shared_dir().string() + "/matrices/" + name + ".mtx.gz";
    o.out_dir = (t.path / "out").string();
    o.db_path = (t.path / "tuning.db").string();
    o.budget_s = 10;
    o.max_candidates = 16;
    o.launch = self_launch();
    const auto r = search::tune(o);
    INFO(name << ": " << r.report.dump(2));
    for (const char* f : {"format.safetensors", "kernel.cu", "kernel.h", "report.json"})
      CHECK(fs::exists(t.path / "out" / f));
    const auto& j = r.report;
    CHECK(j["device"] != "cost-model");
    CHECK(j["cpu_check"]["error"].get<double>() <= j["cpu_check"]["tolerance"].get<double>());
    if (j["measured"].get<bool>()) {
      CHECK(j["error"].get<double>() >= 0);
      CHECK(j["gflops"].get<double>() > 0);
      CHECK(j["gflops"].get<double>() >=
            j["search"]["baseline_csr_vector"]["gflops"].get<double>());
      // The winner was timed on the GPU and verified there, like every measured candidate.
      CHECK(j["error"].get<double>() <= 1e-5);
    } else {
      FAIL("a GPU is present but nothing was measured: " << j["measurement_note"]);
    }
    REQUIRE(j["cusparse"].is_array());
    bool any_verified = false;
    for (const auto& b : j["cusparse"]) any_verified = any_verified || b.value("verified", false);
    CHECK(any_verified);
  }
}

TEST_CASE("a crashing candidate does not stop the search", "[gpu]") {
  const auto a = io::read_matrix((testing::shared_dir() / "matrices" / "dwt_2680.mtx.gz").string());
  search::GpuEvaluator eval(a, "f64", self_launch());
  std::string why;
  REQUIRE(eval.open(&why));
  eval.plant_crash(2);  // the third candidate takes the worker down (SIGSEGV)
  const auto space = search::load_search_space(search::default_search_config_dir() + "/space.json");
  const auto pruning = search::load_pruning(search::default_search_config_dir() + "/pruning.json");
  const auto seeds = search::load_graphs(search::default_graphs_dir());
  const auto baseline = graph::read_graph(search::default_graphs_dir() + "/csr-vector.json");
  search::SearchOptions opt;
  opt.budget_s = 30;
  opt.max_candidates = 12;
  const auto r =
      search::run_search(a, space, search::prune_for(pruning, features::alphasparse_features(a)),
                         seeds, baseline, eval, opt);
  CHECK(r.stats.candidates == 12);
  if (eval.measures()) {
    // The crash is that candidate's failure; later candidates ran on a fresh worker.
    std::size_t lost = r.history.size();
    for (std::size_t i = 0; i < r.history.size() && lost == r.history.size(); ++i)
      if (r.history[i].evaluation.failure.find("worker lost") != std::string::npos) lost = i;
    REQUIRE(lost < r.history.size());
    bool later_ok = false;
    for (std::size_t i = lost + 1; i < r.history.size(); ++i)
      later_ok = later_ok || (r.history[i].evaluation.ok && r.history[i].evaluation.measured);
    CHECK(later_ok);
  }
  CHECK(r.best.evaluation.ok);
  CHECK(r.best.evaluation.failure.empty());
}

TEST_CASE("tune --op spmm on a GPU measures verified SpMM kernels", "[gpu][spmm]") {
  testing::TempDir t("sparsetune-gpu-tune-spmm");
  search::TuneOptions o;
  o.matrix = testing::shared_dir().string() + "/matrices/494_bus.mtx.gz";
  o.op = "spmm";
  o.n = 64;
  o.dtype = "f32";
  o.out_dir = (t.path / "out").string();
  o.db_path = (t.path / "tuning.db").string();
  o.budget_s = 20;
  o.max_candidates = 16;
  o.launch = self_launch();
  const auto r = search::tune(o);
  const auto& j = r.report;
  INFO(j.dump(2));
  REQUIRE(j["measured"].get<bool>());
  CHECK(j["n"] == 64);
  CHECK(j["graph"]["op"] == "spmm");
  // Every measured candidate ran on a poisoned C and was checked against the fp64 A·B.
  CHECK(j["error"].get<double>() >= 0);
  CHECK(j["gflops"].get<double>() > 0);
  CHECK(j["search"]["failures"]["by_category"].value("verification", 0) == 0);
  REQUIRE(j["cusparse"].is_array());  // cuSPARSE's SpMM beside it
  // The warp per run of non-zeros is scored second, after the warp per row in its row order.
  const auto& seeds = j["search"]["seed_order"];
  REQUIRE(seeds.size() > 2);
  CHECK(seeds[1]["seed"] == "nnz-split-warp");
}

TEST_CASE("tune --op spmm --dtype f16 on a GPU measures verified fp16 SpMM kernels",
          "[gpu][spmm][f16]") {
  testing::TempDir t("sparsetune-gpu-tune-spmm-f16");
  search::TuneOptions o;
  o.matrix = testing::shared_dir().string() + "/matrices/494_bus.mtx.gz";
  o.op = "spmm";
  o.n = 32;
  o.dtype = "f16";
  o.out_dir = (t.path / "out").string();
  o.db_path = (t.path / "tuning.db").string();
  o.budget_s = 20;
  o.max_candidates = 12;
  o.launch = self_launch();
  const auto r = search::tune(o);
  const auto& j = r.report;
  INFO(j.dump(2));
  REQUIRE(j["measured"].get<bool>());
  CHECK(j["dtype"] == "f16");
  CHECK(j["graph"]["op"] == "spmm");
  // fp16 A and B, fp32 C: every measured candidate ran on a poisoned C, checked against the
  // fp64 A·B of the fp16-rounded inputs within fp16's tolerance.
  CHECK(j["error"].get<double>() >= 0);
  CHECK(j["error"].get<double>() <= 1e-2);
  CHECK(j["gflops"].get<double>() > 0);
  CHECK(j["search"]["failures"]["by_category"].value("verification", 0) == 0);
  // cuSPARSE's SpMM beside it, fp16 A and B with an fp32 C where it takes that mix (CSR does).
  REQUIRE(j["cusparse"].is_array());
  bool csr_fp32_c = false;
  for (const auto& b : j["cusparse"])
    if (b.value("name", std::string()) == "csr-alg1" && b.value("verified", false))
      csr_fp32_c = b.value("note", std::string()).find("fp32 C") != std::string::npos;
  CHECK(csr_fp32_c);
}

TEST_CASE("tune --rank-by warm ranks by back-to-back time and keeps flushed times", "[gpu]") {
  testing::TempDir t("sparsetune-gpu-tune-warm");
  search::TuneOptions o;
  o.matrix = testing::shared_dir().string() + "/matrices/dwt_2680.mtx.gz";
  o.out_dir = (t.path / "out").string();
  o.db_path = (t.path / "tuning.db").string();
  o.budget_s = 10;
  o.max_candidates = 12;
  o.rank_warm = true;
  o.launch = self_launch();
  const auto j = search::tune(o).report;
  INFO(j.dump(2));
  REQUIRE(j["measured"].get<bool>());
  CHECK(j["ranked_by"] == "warm");
  REQUIRE(j["warm"].is_object());
  // The search's list is in warm time; the winner's entry is its warm median.
  const auto& top = j["search"]["top"];
  REQUIRE(top.size() >= 2);
  for (std::size_t i = 1; i < top.size(); ++i)
    if (top[i]["ok"].get<bool>())
      CHECK(top[i - 1]["time_us"].get<double>() <= top[i]["time_us"].get<double>());
  if (top[0]["graph"] == j["graph_line"])
    CHECK(top[0]["time_us"].get<double>() ==
          Approx(j["warm"]["median_us"].get<double>()).epsilon(1e-9));
  // The report and the database hold the winner's flushed median, not its warm one (the emitted
  // graph is renamed "tuned-<matrix>": its operators identify it).
  db::TuningDb db(o.db_path);
  bool found = false;
  for (const auto& m : db.measurements(j["matrix"]["fingerprint"].get<std::string>()))
    if (m.ok && !m.graph.empty() && nlohmann::json::parse(m.graph)["ops"] == j["graph"]["ops"]) {
      found = true;
      CHECK(m.time_us == Approx(j["time_us"].get<double>()).epsilon(1e-9));
    }
  CHECK(found);
  // Break-even on warm medians: null, or the calls that pay back the format's build time.
  const auto& be = j["format_build"]["break_even_calls_warm"];
  if (!be.is_null()) CHECK(be.get<double>() >= 1.0);
  // A second warm tune searches again instead of answering from the (flushed) database.
  const auto again = search::tune(o).report;
  CHECK_FALSE(again["search"].value("from_database", false));
}
