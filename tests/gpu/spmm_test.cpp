// [gpu] SpMM kernels: the known formats made SpMM (several column tiles and vector widths),
// CELL (its buckets fused into one launch) and random SpMM graphs, on edge cases and shared
// matrices, for n from 1 to 128 (ragged tiles included), f64 and f32, with and without alpha/beta;
// C starts poisoned and must match the fp64 A·B within DESIGN.md's tolerance (the worker's plan job
// checks it).
#include <catch2/catch.hpp>
#include <random>

#include "codegen/emit.hpp"
#include "gpu_cases.hpp"
#include "graph/cell_graph.hpp"
#include "graph/spmm_graph.hpp"
#include "io/matrix_file.hpp"
#include "search/engine.hpp"
#include "search/run_kernels.hpp"
#include "unit/graph/graph_test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::gpu_test;

namespace {

std::vector<std::pair<std::string, Csr64>> spmm_matrices() {
  std::vector<std::pair<std::string, Csr64>> m;
  m.emplace_back("1x1", test::from_triples(1, 1, {{0, 0, 3.0}}));
  m.emplace_back("no entries 7x5", test::from_triples(7, 5, {}));
  m.emplace_back("rectangular 300x90, empty rows", test::random_matrix(3, 300, 90, 0.05, 0.3));
  for (const char* name : {"west0067", "impcol_a"})
    m.emplace_back(
        name, io::read_matrix(
                  (testing::shared_dir() / "matrices" / (std::string(name) + ".mtx.gz")).string()));
  return m;
}

}  // namespace

TEST_CASE("SpMM kernels of the known formats verify", "[gpu][spmm]") {
  const auto matrices = spmm_matrices();
  const auto graphs = search::load_graphs(search::default_graphs_dir());
  // {tn, vec, lanes}: lanes over columns too, with whole vector tiles ({4, 4, 32} at n = 128)
  // and groups of 8.
  const int tiles[][3] = {{1, 1, 1},  {4, 4, 1},  {8, 2, 1}, {3, 4, 1},
                          {1, 1, 32}, {4, 4, 32}, {2, 2, 8}, {4, 4, 8}};
  const std::int64_t ns[] = {1, 7, 32, 128};
  std::vector<Case> cases;
  int k = 0;
  for (const auto& g : graphs)
    for (const auto& [name, a] : matrices) {
      const auto t = tiles[k % 8];
      CaseOptions co;
      co.spmm_n = ns[(k / 8) % 4];
      if (k % 5 == 0) co.scaling = {2.0, -0.5};
      graph::Graph s;
      try {
        s = graph::as_spmm(g, t[0], t[1], t[2]);
      } catch (const graph::GraphError&) {  // an SpMV-only operator (the crux split)
        continue;
      }
      add_case(cases, s, name, a, std::vector<std::string>{"f64", "f32", "f16"}[k % 3], co);
      ++k;
    }
  CHECK(cases.size() >= (graphs.size() - 2) * 3);
  run_cases(cases);
}

TEST_CASE("a warp per run of entries verifies, vector reductions into C included", "[gpu][spmm]") {
  // nnz-split-warp: runs cross rows and a row spans runs. n = 128 and 64 give whole fp32 tiles
  // whose rows of C are 16-byte aligned (red.global.add.v4 / .v2 on sm_90); n = 130 aligns every
  // other row to 8 bytes only, n = 33 leaves ragged tiles: the per-column atomics.
  const auto split = graph::parse_graph(
      R"({"ops": [{"op": "COMPRESS"}, {"op": "BMW_NNZ_BLOCK", "nnz": 64},
      {"op": "BMT_NNZ_BLOCK", "nnz": 64}, {"op": "SET_RESOURCES", "threads": 128},
      {"op": "THREAD_BITMAP_RED"}, {"op": "GMEM_ATOM_RED"}]})",
      "nnz-split-warp");
  const int tiles[][2] = {{4, 4}, {2, 2}, {8, 4}, {1, 1}};
  const std::int64_t ns[] = {128, 64, 130, 33};
  std::vector<Case> cases;
  int k = 0;
  for (const auto& [name, a] : spmm_matrices())
    for (const char* dtype : {"f32", "f64", "f16"}) {
      const auto t = tiles[k % 4];
      CaseOptions co;
      co.spmm_n = ns[(k / 4) % 4];
      if (k % 3 == 0) co.scaling = {2.0, -0.5};
      add_case(cases, graph::as_spmm(split, t[0], t[1], 32), name, a, dtype, co);
      ++k;
    }
  CHECK(cases.size() >= 12);
  run_cases(cases);
}

TEST_CASE("random SpMM graphs give kernels that verify", "[gpu][spmm]") {
  const auto matrices = spmm_matrices();
  graph::RandomGraphOptions ro;
  ro.op = "spmm";
  std::mt19937_64 rng(20261125);
  std::vector<Case> cases;
  for (int drawn = 0; cases.size() < 60 && drawn < 600; ++drawn) {
    const auto g = graph::random_graph(rng, ro);
    const auto& [name, a] = matrices[drawn % matrices.size()];
    CaseOptions co;
    co.spmm_n = std::int64_t{1} + (drawn * 37) % 70;
    add_case(cases, g, name, a, drawn % 3 == 0 ? "f32" : "f64", co);
  }
  REQUIRE(cases.size() >= 40);
  run_cases(cases);
}

TEST_CASE("CELL's fused kernels verify", "[gpu][spmm]") {
  const auto matrices = spmm_matrices();
  std::vector<Case> cases;
  int k = 0;
  for (const auto& [name, a] : matrices)
    for (int p : {1, 2, 3}) {
      if (p > a.cols) continue;
      graph::CellGraphOptions o;
      o.partitions = p;
      o.block_factor = 1 << (k % 3);
      o.tn = k % 2 ? 8 : 3;
      CaseOptions co;
      co.spmm_n = std::vector<std::int64_t>{1, 17, 64}[k % 3];
      if (k % 4 == 1) co.scaling = {0.5, 2.0};
      // Alg. 3's widths, and widths of 2 that fold every row longer than 2.
      add_case(cases, graph::cell_graph(a, co.spmm_n, o), name, a, k % 2 ? "f32" : "f64", co);
      add_case(cases, graph::cell_graph(std::vector<std::int64_t>(p, 2), o), name, a, "f64", co);
      ++k;
    }
  REQUIRE(cases.size() >= 20);
  run_cases(cases);
}

TEST_CASE("sparsetune run measures an emitted SpMM folder", "[gpu][spmm]") {
  testing::TempDir t("sparsetune-gpu-spmm");
  const auto mpath = testing::shared_dir() / "matrices" / "impcol_a.mtx.gz";
  const auto a = io::read_matrix(mpath.string());
  graph::CellGraphOptions co;
  co.partitions = 2;  // fused, every bucket adding atomically
  const auto g = graph::cell_graph(a, 32, co);
  codegen::write_emitted(codegen::generate(g, a), g, (t.path / "out").string());
  search::RunOptions o;
  o.launch = self_launch();
  o.n = 32;
  o.beta = 0.5;
  const auto r = search::run_emitted((t.path / "out").string(), o);
  INFO(search::to_json(r).dump(2));
  CHECK(r.op == "spmm");
  CHECK(r.n == 32);
  CHECK(r.result.status == "ok");
  CHECK(r.result.verified);
  o.matrix_file = mpath.string();  // the reference from the matrix itself
  CHECK(search::run_emitted((t.path / "out").string(), o).result.verified);
}

TEST_CASE("column-major SpMM kernels verify", "[gpu][spmm]") {
  // B and C column-major (ldb = cols, ldc = rows): the known formats with tiles, vectors and
  // lanes over columns, CELL fused, f64/f32/f16, n from 1 to 128, with and without alpha/beta.
  const auto matrices = spmm_matrices();
  const auto graphs = search::load_graphs(search::default_graphs_dir());
  const int tiles[][3] = {{1, 1, 1}, {4, 4, 1}, {8, 2, 1}, {3, 4, 1}, {1, 1, 32}, {2, 2, 8}};
  const std::int64_t ns[] = {1, 3, 32, 33, 128};
  std::vector<Case> cases;
  int k = 0;
  for (const auto& g : graphs)
    for (const auto& [name, a] : matrices) {
      const auto t = tiles[k % 6];
      CaseOptions co;
      co.layout = "col";
      co.spmm_n = ns[(k / 6) % 5];
      if (k % 4 == 0) co.scaling = {2.0, -0.5};
      graph::Graph s;
      try {
        s = graph::as_spmm(g, t[0], t[1], t[2]);
      } catch (const graph::GraphError&) {
        continue;
      }
      add_case(cases, s, name, a, std::vector<std::string>{"f64", "f32", "f16"}[k % 3], co);
      ++k;
    }
  for (const auto& [name, a] : matrices)
    for (int p : {1, 3}) {
      if (p > a.cols) continue;
      graph::CellGraphOptions o;
      o.partitions = p;
      CaseOptions co;
      co.layout = "col";
      co.spmm_n = p == 1 ? 17 : 64;
      co.scaling = {0.5, 2.0};
      add_case(cases, graph::cell_graph(a, co.spmm_n, o), name, a, "f64", co);
    }
  REQUIRE(cases.size() >= 30);
  run_cases(cases);
}

TEST_CASE("sparsetune run measures a column-major SpMM folder", "[gpu][spmm]") {
  testing::TempDir t("sparsetune-gpu-spmm-col");
  const auto mpath = testing::shared_dir() / "matrices" / "impcol_a.mtx.gz";
  const auto a = io::read_matrix(mpath.string());
  const auto g = graph::as_spmm(
      graph::read_graph(search::default_graphs_dir() + "/csr-vector.json"), 1, 1, 32);
  codegen::EmitOptions eo;
  eo.layout = "col";
  codegen::write_emitted(codegen::generate(g, a, eo), g, (t.path / "out").string());
  search::RunOptions o;
  o.launch = self_launch();
  o.n = 40;
  o.beta = 0.5;
  o.layout = "col";
  const auto r = search::run_emitted((t.path / "out").string(), o);
  INFO(search::to_json(r).dump(2));
  CHECK(r.layout == "col");
  CHECK(r.result.status == "ok");
  CHECK(r.result.verified);
  o.matrix_file = mpath.string();  // the reference from the matrix itself, column-major
  CHECK(search::run_emitted((t.path / "out").string(), o).result.verified);
}

TEST_CASE("sparsetune run measures an emitted f16 SpMM folder: fp16 A and B, fp32 C",
          "[gpu][spmm][f16]") {
  testing::TempDir t("sparsetune-gpu-spmm-f16");
  const auto mpath = testing::shared_dir() / "matrices" / "impcol_a.mtx.gz";
  const auto a = io::read_matrix(mpath.string());
  // A warp of lanes over columns (store-only) and segmented COO (atomics into a scaled C).
  for (const auto& [name, lanes] : {std::pair{"csr-vector", 32}, std::pair{"segmented-coo", 1}}) {
    const auto g = graph::as_spmm(
        graph::read_graph(search::default_graphs_dir() + "/" + name + ".json"), 4, 4, lanes);
    codegen::EmitOptions eo;
    eo.design.dtype = "f16";
    const auto dir = (t.path / name).string();
    codegen::write_emitted(codegen::generate(g, a, eo), g, dir);
    search::RunOptions o;
    o.launch = self_launch();
    o.n = 48;
    o.beta = 0.5;
    const auto r = search::run_emitted(dir, o);
    INFO(name << ": " << search::to_json(r).dump(2));
    CHECK(r.dtype == "f16");
    CHECK(r.result.status == "ok");
    CHECK(r.result.verified);
    CHECK(r.result.tolerance >= 1e-2);
    o.matrix_file = mpath.string();  // the reference from the matrix itself, rounded to fp16
    CHECK(search::run_emitted(dir, o).result.verified);
  }
}
