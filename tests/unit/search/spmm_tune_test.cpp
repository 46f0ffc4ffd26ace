// tune --op spmm without a GPU: the search ranks SpMM graphs (each with its column tile) by the
// cost model, emits the winner and compiles it; the database rows record the op and n.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

#include "codegen/emit.hpp"
#include "codegen/launch_plan.hpp"
#include "core/convert.hpp"
#include "core/fingerprint.hpp"
#include "core/reference.hpp"
#include "core/row_orders.hpp"
#include "db/tuning_db.hpp"
#include "features/matrix_features.hpp"
#include "graph/cell_graph.hpp"
#include "graph/format.hpp"
#include "graph/graph.hpp"
#include "graph/half.hpp"
#include "graph/interpreter.hpp"
#include "graph/spmm_graph.hpp"
#include "io/matrix_file.hpp"
#include "models/predictors.hpp"
#include "search/config.hpp"
#include "search/run_kernels.hpp"
#include "search/space.hpp"
#include "search/spmm_seeds.hpp"
#include "search/tune.hpp"
#include "test_support.hpp"

using namespace sparsetune;
namespace fs = std::filesystem;

namespace {

search::TuneOptions spmm_options(const testing::TempDir& t, std::int64_t n) {
  search::TuneOptions o;
  o.matrix = std::string(SPARSETUNE_SHARED_DIR) + "/matrices/494_bus.mtx.gz";
  o.op = "spmm";
  o.n = n;
  o.out_dir = (t.path / "out").string();
  o.db_path = (t.path / "tuning.db").string();
  o.budget_s = 0;
  o.max_candidates = 24;
  o.use_gpu = false;
  return o;
}

}  // namespace

TEST_CASE("tune --op spmm --n 128 predicts, emits and compiles an SpMM kernel", "[search][spmm]") {
  testing::TempDir t("sparsetune-spmm-tune");
  const auto o = spmm_options(t, 128);
  const auto r = search::tune(o);
  const auto& j = r.report;
  CHECK(j["op"] == "spmm");
  CHECK(j["n"] == 128);
  CHECK(j["measured"] == false);
  CHECK(j["graph"]["op"] == "spmm");
  CHECK(j["graph_line"].get<std::string>().find("COL_TILE") != std::string::npos);
  CHECK(j["cpu_check"]["error"].get<double>() <= j["cpu_check"]["tolerance"].get<double>());
  // GFLOP/s count 2 nnz n flops: far above what one SpMV of the predicted time would give.
  CHECK(j["gflops"].get<double>() > 0);
  CHECK(j["search"]["candidates"] == 24);
  // The known formats and CELL (Alg. 3's widths) seed the search, each with its column tile.
  std::set<std::string> seeds;
  for (const auto& x : j["search"]["seed_order"]) seeds.insert(x["seed"].get<std::string>());
  CHECK(seeds.count("csr-scalar") == 1);
  // At budget 0 the liteform-cell model drops CELL where it predicts no (the shipped sm_90 model
  // does on this matrix); without learned models CELL over 1, 2 and 4 partitions is seeded.
  const bool dropped = j["cell_pick"].value("cell", true) == false;
  CHECK(seeds.count("cell-p1") == (dropped ? 0 : 1));
  {
    testing::TempDir t2("sparsetune-spmm-tune-plain");
    auto plain = spmm_options(t2, 128);
    plain.learned = false;
    std::set<std::string> s2;
    const auto rp = search::tune(plain).report;
    INFO(rp["search"].dump());
    for (const auto& x : rp["search"]["seed_order"]) s2.insert(x["seed"].get<std::string>());
    CHECK(s2.count("cell-p1") == 1);
    CHECK(s2.count("cell-p2") == 1);
    CHECK(s2.count("cell-p4") == 1);
  }

  const auto f = graph::read_format((t.path / "out" / "format.safetensors").string());
  CHECK(f.op == "spmm");
  std::ifstream h(t.path / "out" / "kernel.h");
  const std::string header{std::istreambuf_iterator<char>(h), std::istreambuf_iterator<char>()};
  CHECK(header.find("long long ldb") != std::string::npos);
  // The emitted format computes A·B (the interpreter against the fp64 reference).
  const Csr64 a = io::read_matrix(o.matrix);
  std::vector<double> b(static_cast<std::size_t>(a.cols * 5));
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(i % 7) - 3.0;
  CHECK(relative_l2_error(graph::interpret_spmm(f, b, 5), spmm_reference(a, b, 5)) <= 1e-12);
  // Every scored candidate is a row of op spmm and n 128; a second tune answers from them.
  const auto rows = db::TuningDb(o.db_path).measurements();
  REQUIRE(rows.size() == 24);
  for (const auto& m : rows) {
    CHECK(m.op == "spmm");
    CHECK(m.n == 128);
  }
  CHECK(search::tune(o).report["search"]["from_database"] == true);
  // Another n is another problem: searched, not answered.
  auto o8 = spmm_options(t, 8);
  CHECK(search::tune(o8).report["search"]["from_database"] == false);
}

TEST_CASE("tune --op spmm seeds the warp-per-row kernel under two row orders", "[search][spmm]") {
  testing::TempDir t("sparsetune-spmm-orders");
  auto o = spmm_options(t, 32);
  // Rows of about 60 entries: a warp per row is not pruned as it is for 494_bus's short rows.
  o.matrix = std::string(SPARSETUNE_SHARED_DIR) + "/matrices/bcsstk16.mtx.gz";
  const auto r = search::tune(o);
  std::set<std::string> seeds;
  for (const auto& x : r.report["search"]["seed_order"]) seeds.insert(x["seed"].get<std::string>());
  // n = 32: the warp-per-row kernel is warp-row-lanes (a warp per row, lanes over columns).
  CHECK(seeds.count("warp-row-lanes-lpt") == 1);
  CHECK(seeds.count("warp-row-lanes-hybrid1") == 1);
  // Whatever wins computes A·B.
  const auto f = graph::read_format((t.path / "out" / "format.safetensors").string());
  const Csr64 a = io::read_matrix(o.matrix);
  std::vector<double> b(static_cast<std::size_t>(a.cols * 3));
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(i % 5) - 2.0;
  CHECK(relative_l2_error(graph::interpret_spmm(f, b, 3), spmm_reference(a, b, 3)) <= 1e-12);
}

TEST_CASE("tune --op spmm --n 1 and a ragged n", "[search][spmm]") {
  for (std::int64_t n : {1, 37}) {
    testing::TempDir t("sparsetune-spmm-tune");
    auto o = spmm_options(t, n);
    o.dtype = "f32";
    o.max_candidates = 10;
    const auto r = search::tune(o);
    CHECK(r.report["n"] == n);
    CHECK(r.report["cpu_check"]["error"].get<double>() <=
          r.report["cpu_check"]["tolerance"].get<double>());
    CHECK(fs::file_size(t.path / "out" / "kernel.cu") > 0);
  }
}

TEST_CASE("an SpMM launch plan: B and C of n columns, grid y over the column tiles",
          "[search][spmm]") {
  const Csr64 a = io::read_matrix(std::string(SPARSETUNE_SHARED_DIR) + "/matrices/west0067.mtx.gz");
  graph::Graph g = graph::parse_graph(
      R"({"op": "spmm", "ops": [{"op": "COMPRESS"}, {"op": "COL_TILE", "tn": 8, "vec": 4},
      {"op": "BMT_NNZ_BLOCK", "nnz": 4}, {"op": "THREAD_BITMAP_RED"}, {"op": "WARP_SEG_RED"},
      {"op": "GMEM_ATOM_RED"}]})",
      "test");
  const auto e = codegen::generate(g, a);
  const codegen::Scaling s{2.0, 0.5};
  const auto p = codegen::make_launch_plan(e.format, e.kernels, "t", s, 20);
  CHECK(p.op == "spmm");
  REQUIRE(p.launches.size() == 2);  // C = beta C, then the part
  CHECK(p.launches[0].kernel == codegen::kScaleKernelSpmm);
  CHECK(p.launches[0].args.size() == 5);
  CHECK(p.launches[1].grid_y == 3);      // 20 columns in tiles of 8
  CHECK(p.launches[1].args[1].i == 20);  // ldb
  auto in = codegen::spmm_plan_inputs("f64", a, 20);
  CHECK(in.x.size() == static_cast<std::size_t>(a.cols * 20));
  CHECK(relative_l2_error(in.y_ref, spmm_reference(a, in.x, 20)) == 0.0);
  codegen::apply_scaling(in, "f64", s);
  const auto file = codegen::plan_file(p, {}, in.max_len, &in);
  const auto plan = nlohmann::json::parse(file.metadata.at("sparsetune-plan"));
  CHECK(plan["output"]["length"] == a.rows * 20);
  CHECK(plan["cost"]["op"] == "spmm");
  CHECK(plan["cost"]["n"] == 20);
  CHECK(plan["launches"][1]["grid"][1] == 3);
  CHECK_THROWS_WITH(codegen::make_launch_plan(e.format, e.kernels, "t", s, 0),
                    Catch::Contains("n = 0"));
}

TEST_CASE("run refuses SpMV options on an SpMM folder before looking for a GPU", "[search][spmm]") {
  testing::TempDir t("sparsetune-spmm-run");
  const Csr64 a = io::read_matrix(std::string(SPARSETUNE_SHARED_DIR) + "/matrices/west0067.mtx.gz");
  const auto g =
      graph::as_spmm(graph::read_graph(search::default_graphs_dir() + "/segmented-coo.json"), 4, 4);
  codegen::write_emitted(codegen::generate(g, a), g, (t.path / "spmm").string());
  search::RunOptions o;
  o.x_file = t.file("x.txt");
  CHECK_THROWS_WITH(search::run_emitted((t.path / "spmm").string(), o),
                    Catch::Contains("--x is SpMV's vector"));
  const auto v = graph::read_graph(search::default_graphs_dir() + "/csr-vector.json");
  codegen::write_emitted(codegen::generate(v, a), v, (t.path / "spmv").string());
  o = {};
  o.n = 8;
  CHECK_THROWS_WITH(search::run_emitted((t.path / "spmv").string(), o),
                    Catch::Contains("--n is the columns of B"));
}

TEST_CASE("tune --op spmm tries the warp-per-row graph under the picked row order first",
          "[search][spmm][row-order]") {
  testing::TempDir t("sparsetune-spmm-row-order");
  auto o = spmm_options(t, 32);
  // Rows of 168 entries: the warp-per-row graph is not pruned as it is for short rows.
  o.matrix = std::string(SPARSETUNE_SHARED_DIR) + "/matrices/cora.mtx.gz";
  const auto r = search::tune(o);
  const auto& ro = r.report["row_order"];
  REQUIRE(ro.is_object());
  const auto order = ro["order"].get<std::string>();
  CHECK_NOTHROW(row_orders::parse(order));
  CHECK_FALSE(ro["by"].get<std::string>().empty());
  const auto& seeds = r.report["search"]["seed_order"];
  REQUIRE(seeds.size() > 1);
  CHECK(seeds[0]["seed"] == "warp-row-lanes-" + order);
}

TEST_CASE("tune --op spmm seeds lanes over columns, and the search tunes the lanes",
          "[search][spmm]") {
  const auto vector = graph::read_graph(search::default_graphs_dir() + "/csr-vector.json");
  // (n, lanes, tn, vec) of the seeds.
  const std::int64_t want[][4] = {{1, 1, 1, 1},    {3, 4, 1, 1},    {32, 32, 1, 1},  {33, 32, 1, 1},
                                  {128, 32, 4, 4}, {129, 32, 4, 4}, {1024, 32, 8, 4}};
  for (const auto& w : want) {
    INFO("n = " << w[0]);
    const auto seeds = search::spmm_lanes_seeds(vector, w[0], 1'000'000);
    REQUIRE(seeds.size() == 3u + (w[0] >= 32) + (w[0] >= 32 && w[0] < 128));
    if (w[0] >= 32 && w[0] < 128) {  // groups of n / 4 lanes, a row each, vectors of 4
      CHECK(seeds.back().name == "csr-scalar-lanes");
      CHECK(seeds.back().ops[1].params["lanes"] == 8);
      CHECK(seeds.back().ops[1].params["tn"] == 4);
    }
    if (w[0] >= 32) {  // a warp per run: warp block and thread block both runs of 32 (1M / 16k)
      const auto& s = seeds[3];
      CHECK(s.name == "nnz-split-warp");
      REQUIRE(s.ops.size() > 3);
      CHECK(s.ops[2].op == "BMW_NNZ_BLOCK");
      CHECK(s.ops[2].params["nnz"] == 32);
      CHECK(s.ops[3].op == "BMT_NNZ_BLOCK");
      CHECK(s.ops[3].params["nnz"] == 32);
    }
    CHECK(seeds[0].name == "csr-vector-lanes");
    CHECK(seeds[1].name == (w[0] >= 32 ? "warp-row-lanes" : "csr-scalar-lanes"));
    CHECK(seeds[2].name == "nnz-split-lanes");
    CHECK(graph::describe(search::row_order_kernel(vector, w[0])) ==
          graph::describe(seeds[w[0] >= 32 ? 1 : 0]));
    for (std::size_t i = 0; i < 3u + (w[0] >= 32); ++i) {
      const auto& s = seeds[i];
      CHECK(s.op == "spmm");
      const auto& tile = s.ops[1];
      REQUIRE(tile.op == "COL_TILE");
      CHECK(tile.params.value("lanes", 1) == w[1]);
      CHECK(tile.params["tn"] == w[2]);
      CHECK(tile.params["vec"] == w[3]);
    }
  }
  // The search space has a lanes axis, so a seed's lanes are tuned like its tile.
  const auto space = search::load_search_space(search::default_search_config_dir() + "/space.json");
  bool lanes_axis = false;
  for (const auto& slot : search::tunable_slots(search::spmm_lanes_seeds(vector, 128)[0], space))
    lanes_axis = lanes_axis || (slot.axis->op == "COL_TILE" && slot.axis->param == "lanes");
  CHECK(lanes_axis);
  // tune scores both (bcsstk16's rows of about 60 entries keep a warp per row): warp-row-lanes
  // as the baseline, scored first, csr-vector-lanes as a seed.
  testing::TempDir t("sparsetune-spmm-lanes");
  auto o = spmm_options(t, 128);
  o.matrix = std::string(SPARSETUNE_SHARED_DIR) + "/matrices/bcsstk16.mtx.gz";
  const auto r = search::tune(o);
  std::set<std::string> seeds;
  for (const auto& x : r.report["search"]["seed_order"]) seeds.insert(x["seed"].get<std::string>());
  CHECK(seeds.count("csr-vector-lanes") == 1);
  CHECK(r.report["search"]["baseline_csr_vector"]["graph"].get<std::string>().find(
            "COL_TILE(lanes=32,tn=4,vec=4) > BMW_ROW_BLOCK") != std::string::npos);
  const auto f = graph::read_format((t.path / "out" / "format.safetensors").string());
  const Csr64 a = io::read_matrix(o.matrix);
  std::vector<double> b(static_cast<std::size_t>(a.cols * 3));
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(i % 5) - 2.0;
  CHECK(relative_l2_error(graph::interpret_spmm(f, b, 3), spmm_reference(a, b, 3)) <= 1e-12);
}

TEST_CASE("tune --op spmm measures the non-zero split first where one row dwarfs the rest",
          "[search][spmm]") {
  // 600 rows of 2 entries and one of 1,200: a warp per row would wait on that row alone.
  Csr64 a;
  a.rows = 601;
  a.cols = 1300;
  a.row_ptr.push_back(0);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const std::int64_t len = r == 300 ? 1200 : 2;
    for (std::int64_t k = 0; k < len; ++k) {
      a.col_idx.push_back(r == 300 ? k : (r + k * 7) % a.cols);
      a.val.push_back(1.0 + 0.25 * static_cast<double>(k % 3));
    }
    std::sort(a.col_idx.end() - len, a.col_idx.end());
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
  }
  testing::TempDir t("sparsetune-spmm-skewed");
  const std::string path = (t.path / "skewed.mtx").string();
  io::write_matrix(path, a);
  auto o = spmm_options(t, 64);
  o.matrix = path;
  const std::string first =
      search::tune(o).report["search"]["baseline_csr_vector"]["graph"].get<std::string>();
  // n = 64: a warp per run of entries (the tile has 32 lanes).
  CHECK(first.find("COL_TILE(lanes=32,") != std::string::npos);
  CHECK(first.find("BMW_NNZ_BLOCK(") != std::string::npos);
  CHECK(first.find("BMT_NNZ_BLOCK(") != std::string::npos);
  CHECK(first.find("BMW_ROW_BLOCK") == std::string::npos);
  // n = 16: 16 lanes cannot fill a warp's run, so the thread split (segmented-coo).
  auto o16 = spmm_options(t, 16);
  o16.matrix = path;
  o16.out_dir = (t.path / "out16").string();
  const std::string first16 =
      search::tune(o16).report["search"]["baseline_csr_vector"]["graph"].get<std::string>();
  CHECK(first16.find("BMT_NNZ_BLOCK") != std::string::npos);
  CHECK(first16.find("BMW_NNZ_BLOCK") == std::string::npos);
  CHECK(first16.find("BMW_ROW_BLOCK") == std::string::npos);
  // The same rows with the long one cut to 40 entries keep the warp per row.
  a.col_idx.erase(a.col_idx.begin() + a.row_ptr[300] + 40, a.col_idx.begin() + a.row_ptr[301]);
  a.val.erase(a.val.begin() + a.row_ptr[300] + 40, a.val.begin() + a.row_ptr[301]);
  for (std::int64_t r = 301; r <= a.rows; ++r) a.row_ptr[r] -= 1160;
  io::write_matrix(path, a);
  o.force = true;
  CHECK(search::tune(o).report["search"]["baseline_csr_vector"]["graph"].get<std::string>().find(
            "BMW_ROW_BLOCK") != std::string::npos);
}

TEST_CASE("tune --op spmm --layout col emits column-major kernels checked on the CPU",
          "[search][spmm]") {
  testing::TempDir t("sparsetune-spmm-col");
  auto o = spmm_options(t, 33);
  o.layout = "col";
  o.max_candidates = 12;
  const auto r = search::tune(o);
  CHECK(r.report["layout"] == "col");
  CHECK(r.report["cpu_check"]["error"].get<double>() <=
        r.report["cpu_check"]["tolerance"].get<double>());
  const auto f = graph::read_format((t.path / "out" / "format.safetensors").string());
  CHECK(f.col_major());
  // The interpreter's column-major product of the emitted format against the fp64 reference.
  const Csr64 a = io::read_matrix(o.matrix);
  std::vector<double> b(static_cast<std::size_t>(a.cols * 33));
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(i % 17) / 8.0 - 1.0;
  std::vector<double> b_row(b.size());
  for (std::int64_t i = 0; i < a.cols; ++i)
    for (std::int64_t j = 0; j < 33; ++j) b_row[i * 33 + j] = b[i + j * a.cols];
  const auto c = graph::interpret_spmm(f, b, 33);
  const auto ref = spmm_reference(a, b_row, 33);
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t j = 0; j < 33; ++j)
      REQUIRE(std::abs(c[i + j * a.rows] - ref[i * 33 + j]) <=
              1e-9 * (1 + std::abs(ref[i * 33 + j])));
  // A row-major tune of the same matrix is answered by the same design, kernels row-major.
  auto row = spmm_options(t, 33);
  row.max_candidates = 12;
  CHECK(search::tune(row).report["layout"] == "row");
  CHECK_FALSE(graph::read_format((t.path / "out" / "format.safetensors").string()).col_major());
  // A layout with another op, or an unknown one, is refused before anything is written.
  auto bad = spmm_options(t, 4);
  bad.out_dir = (t.path / "bad").string();
  bad.layout = "diagonal";
  CHECK_THROWS_WITH(search::tune(bad), Catch::Contains("--layout must be row or col"));
  bad.layout = "col";
  bad.op = "spmv";
  bad.n = 1;
  CHECK_THROWS_WITH(search::tune(bad), Catch::Contains("for --op spmm only"));
  CHECK_FALSE(std::filesystem::exists(t.path / "bad"));
}

TEST_CASE("run --layout checks the layout an SpMM folder was generated for", "[search][spmm]") {
  testing::TempDir t("sparsetune-spmm-run-col");
  const Csr64 a = io::read_matrix(std::string(SPARSETUNE_SHARED_DIR) + "/matrices/west0067.mtx.gz");
  const auto g =
      graph::as_spmm(graph::read_graph(search::default_graphs_dir() + "/segmented-coo.json"), 4, 4);
  codegen::EmitOptions eo;
  eo.layout = "col";
  codegen::write_emitted(codegen::generate(g, a, eo), g, (t.path / "col").string());
  search::RunOptions o;
  o.layout = "row";
  CHECK_THROWS_WITH(search::run_emitted((t.path / "col").string(), o),
                    Catch::Contains("generated for col-major B and C, not row-major"));
  o.layout = "diagonal";
  CHECK_THROWS_WITH(search::run_emitted((t.path / "col").string(), o),
                    Catch::Contains("row or col"));
  const auto v = graph::read_graph(search::default_graphs_dir() + "/csr-vector.json");
  codegen::write_emitted(codegen::generate(v, a), v, (t.path / "spmv").string());
  o.layout = "col";
  CHECK_THROWS_WITH(search::run_emitted((t.path / "spmv").string(), o),
                    Catch::Contains("--layout is the layout of SpMM's B and C"));
}

TEST_CASE("a liteform-cell model that rules CELL out keeps it out of a predict-only answer",
          "[search][spmm][liteform]") {
  testing::TempDir t("sparsetune-spmm-cell-model");
  {
    // Four matrices on which CELL never wins: the model learns "not CELL".
    db::TuningDb db(t.file("labels.db"));
    for (const char* name : {"cora", "bcsstk21", "can_1072", "dwt_2680", "494_bus"}) {
      const Csr64 a =
          io::read_matrix(std::string(SPARSETUNE_SHARED_DIR) + "/matrices/" + name + ".mtx.gz");
      const auto f = features::feature_row(features::matrix_features(a));
      db.put_matrix({fingerprint(a), name, a.rows, a.cols, a.nnz(), f.dump()});
      graph::CellGraphOptions two;
      two.partitions = 2;
      const double two_us = std::string(name) == "cora" || std::string(name) == "494_bus" ? 18 : 25;
      for (const auto& [cand, graph, us] :
           {std::tuple{"graph/cell", graph::graph_to_json(graph::cell_graph(a, 32, {})).dump(),
                       20.0},
            std::tuple{"graph/cell2", graph::graph_to_json(graph::cell_graph(a, 32, two)).dump(),
                       two_us},
            std::tuple{"graph/csr", std::string(R"({"ops": [{"op": "COMPRESS"}]})"), 10.0}}) {
        db::Measurement m;
        m.fingerprint = fingerprint(a);
        m.op = "spmm";
        m.n = 32;
        m.dtype = "f32";
        m.device = "NVIDIA H100 80GB HBM3";
        m.arch = "sm_90";
        m.candidate = cand;
        m.graph = graph;
        m.time_us = us;
        db.add(m);
      }
    }
    models::TrainOptions o;
    o.out_dir = (t.path / "models").string();
    models::find_predictor("liteform-cell").train(db, o);
    models::find_predictor("liteform-partitions").train(db, o);
  }
  auto o = spmm_options(t, 32);
  o.matrix = std::string(SPARSETUNE_SHARED_DIR) + "/matrices/cora.mtx.gz";
  o.models_dir = (t.path / "models").string();
  const auto r = search::tune(o);
  const auto& pick = r.report["cell_pick"];
  REQUIRE(pick.contains("cell"));
  CHECK_FALSE(pick["cell"].get<bool>());
  CHECK(pick["probability"].get<double>() < 0.5);
  const int parts = pick["partitions"].get<int>();  // the second predictor's count
  CHECK((parts == 1 || parts == 2));
  for (const auto& s : r.report["search"]["seed_order"])
    CHECK(s["seed"].get<std::string>().rfind("cell-p", 0) == std::string::npos);

  o.models_dir = (t.path / "none").string();
  o.force = true;
  const auto without = search::tune(o);
  CHECK_THAT(without.report["cell_pick"]["why_not_predicted"].get<std::string>(),
             Catch::Contains("no liteform-cell model"));
  CHECK_THAT(without.report["cell_pick"]["partitions_why_not_predicted"].get<std::string>(),
             Catch::Contains("no liteform-partitions model"));
  bool cell_seeded = false;
  for (const auto& s : without.report["search"]["seed_order"])
    cell_seeded |= s["seed"].get<std::string>().rfind("cell-p", 0) == 0;
  CHECK(cell_seeded);
}

TEST_CASE("tune --op spmm --dtype f16 predicts, checks on the CPU and emits fp16 A and B, fp32 C",
          "[search][spmm][f16]") {
  testing::TempDir t("sparsetune-spmm-f16");
  auto o = spmm_options(t, 16);
  o.dtype = "f16";
  o.max_candidates = 12;
  const auto r = search::tune(o);
  const auto& j = r.report;
  CHECK(j["op"] == "spmm");
  CHECK(j["dtype"] == "f16");
  CHECK(j["measured"] == false);
  // The CPU check of the winner: fp16's tolerance, and within it.
  CHECK(j["cpu_check"]["tolerance"].get<double>() >= 1e-2);
  CHECK(j["cpu_check"]["error"].get<double>() <= j["cpu_check"]["tolerance"].get<double>());
  for (const auto& m : db::TuningDb(o.db_path).measurements()) {
    CHECK(m.dtype == "f16");
    CHECK(m.op == "spmm");
  }
  const auto f = graph::read_format((t.path / "out" / "format.safetensors").string());
  CHECK(f.op == "spmm");
  CHECK(f.dtype == "f16");
  // kernel.h takes B as fp16 bits and C, alpha and beta as fp32.
  std::ifstream h(t.path / "out" / "kernel.h");
  const std::string header{std::istreambuf_iterator<char>(h), std::istreambuf_iterator<char>()};
  CHECK(header.find("typedef unsigned short value_t;  // B") != std::string::npos);
  CHECK(header.find("typedef float result_t;  // C") != std::string::npos);
  CHECK(header.find("B holds fp16 bits, C is fp32") != std::string::npos);
  CHECK(header.find("inline cudaError_t run(const Format& f, const value_t* B, long long ldb, "
                    "result_t* C,") != std::string::npos);

  // The interpreter walks the emitted format on A and B rounded to fp16, as the GPU reads them:
  // against an fp64 A·B of the fp16-rounded A and B it agrees to fp64 rounding, and against the
  // unrounded A·B it differs by fp16's rounding.
  const Csr64 a = io::read_matrix(o.matrix);
  const auto to_half = [](double v) {
    return static_cast<double>(graph::half_to_float(graph::float_to_half(static_cast<float>(v))));
  };
  const std::int64_t n = 5;
  std::vector<double> b(static_cast<std::size_t>(a.cols * n)), b16(b.size());
  for (std::size_t i = 0; i < b.size(); ++i) {
    b[i] = (static_cast<double>(i % 11) - 5.0) / 3.0 + 1e-3;  // not fp16 values
    b16[i] = to_half(b[i]);
  }
  Csr64 a16 = a;
  for (auto& v : a16.val) v = to_half(v);
  const auto c = graph::interpret_spmm(f, b, n);
  CHECK(relative_l2_error(c, spmm_reference(a16, b16, n)) <= 1e-12);
  const double unrounded = relative_l2_error(c, spmm_reference(a, b, n));
  CHECK(unrounded > 1e-6);
  CHECK(unrounded <= 1e-2);
}

TEST_CASE("run's default n is the n an SpMM folder's report records", "[search]") {
  testing::TempDir t("sparsetune-tuned-n");
  CHECK(search::tuned_n(t.path) == 16);  // no report
  const auto report = [&](const std::string& text) {
    std::ofstream(t.file("report.json")) << text;
  };
  report(R"({"op": "spmm", "n": 128})");
  CHECK(search::tuned_n(t.path) == 128);
  report(R"({"op": "spmv"})");
  CHECK(search::tuned_n(t.path) == 16);
  report(R"({"n": 0})");
  CHECK(search::tuned_n(t.path) == 16);
  report(R"({"n": 2.5})");
  CHECK(search::tuned_n(t.path) == 16);
  report("{not json");
  CHECK(search::tuned_n(t.path) == 16);
}

TEST_CASE("SpMM seeds CTA-aware with shared-line candidates where B outgrows the cache",
          "[search][spmm]") {
  const auto csr_vector = graph::read_graph(search::default_graphs_dir() + "/csr-vector.json");
  // 32 MiB of B at 4 bytes a value: 65,536 columns at N = 128, 262,144 at N = 32.
  auto matrix = [](std::int64_t cols) {
    Coo64 c;
    c.rows = 64;
    c.cols = cols;
    for (std::int64_t r = 0; r < c.rows; ++r)
      for (std::int64_t k = 0; k < 3; ++k) {
        c.row.push_back(r);
        c.col.push_back((r * 7919 + k * 104729) % cols);
        c.val.push_back(1.0 + static_cast<double>(k));
      }
    std::int64_t dup = 0;
    return coo_to_csr<std::int64_t, std::int64_t>(c, &dup);
  };
  auto names = [&](const Csr64& a, std::int64_t n) {
    std::set<std::string> s;
    for (const auto& g : search::spmm_seeds({}, csr_vector, a, n, 3).seeds) s.insert(g.name);
    return s;
  };
  const std::string seed = "warp-row-lanes-cta-aware-shared-lines";
  CHECK(search::b_outgrows_cache(65536, 128));
  CHECK(names(matrix(65536), 128).count(seed) == 1);
  CHECK_FALSE(search::b_outgrows_cache(65535, 128));
  // Past 2^25 entries the order's host time is left out of the search.
  CHECK(search::seeds_shared_line_order(1 << 20, 1 << 25, 32));
  CHECK_FALSE(search::seeds_shared_line_order(1 << 20, (1 << 25) + 1, 32));
  CHECK_FALSE(search::seeds_shared_line_order(1000, 5000, 128));
  CHECK(names(matrix(65535), 128).count(seed) == 0);
  CHECK(names(matrix(65536), 32).count(seed) == 0);
  CHECK(names(matrix(262144), 32).count(seed) == 1);
  // The seed designs: the order's permutation, and the product unchanged.
  for (const auto& g : search::spmm_seeds({}, csr_vector, matrix(65536), 128, 3).seeds) {
    if (g.name != seed) continue;
    CHECK(g.ops[0].params.at("candidates") == 1);
    const Csr64 a = matrix(65536);
    const auto f = graph::design(g, a);
    std::vector<double> b(static_cast<std::size_t>(a.cols * 2));
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(i % 9) - 4.0;
    CHECK(relative_l2_error(graph::interpret_spmm(f, b, 2), spmm_reference(a, b, 2)) <= 1e-12);
  }
}
