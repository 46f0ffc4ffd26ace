// [gpu] tests of generated kernels: every known-format graph and a few hundred seeded random
// graphs, designed for shared matrices and edge cases (empty rows, 1x1, rectangular, one long
// row), compiled by NVRTC and run through the launch-plan job; y must match the fp64 reference.
#include <stdlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "codegen/emit.hpp"
#include "codegen/launch_plan.hpp"
#include "core/convert.hpp"
#include "gpu_cases.hpp"
#include "graph/random_graph.hpp"
#include "io/matrix_file.hpp"
#include "io/safetensors.hpp"
#include "runtime/bench.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/launch_plan.hpp"
#include "runtime/nvrtc.hpp"
#include "runtime/worker.hpp"
#include "search/engine.hpp"
#include "search/run_kernels.hpp"
#include "test_support.hpp"
#include "unit/graph/graph_test_util.hpp"

namespace fs = std::filesystem;
using namespace sparsetune;
using namespace sparsetune::gpu_test;

namespace {

std::vector<std::pair<std::string, Csr64>> test_matrices() {
  std::vector<std::pair<std::string, Csr64>> m;
  m.emplace_back("1x1", test::from_triples(1, 1, {{0, 0, 3.0}}));
  m.emplace_back("no entries 7x5", test::from_triples(7, 5, {}));
  std::vector<std::tuple<std::int64_t, std::int64_t, double>> longrow;
  for (std::int64_t c = 0; c < 3000; ++c) longrow.emplace_back(40, c, 0.5 + c % 5);
  longrow.emplace_back(0, 0, 1.0);
  longrow.emplace_back(79, 2999, -1.0);
  m.emplace_back("one long row, empty rows", test::from_triples(80, 3000, longrow));
  m.emplace_back("rectangular 300x90, empty rows", test::random_matrix(3, 300, 90, 0.05, 0.3));
  m.emplace_back("rectangular 60x700", test::random_matrix(4, 60, 700, 0.02, 0.1));
  for (const char* name : {"west0067", "impcol_a", "Erdos971", "rajat19", "dwt_2680", "nnc1374"})
    m.emplace_back(
        name, io::read_matrix(
                  (testing::shared_dir() / "matrices" / (std::string(name) + ".mtx.gz")).string()));
  return m;
}

}  // namespace

TEST_CASE("known-format kernels verify on shared matrices and edge cases", "[gpu]") {
  const auto matrices = test_matrices();
  const auto graphs = search::load_graphs(search::default_graphs_dir());
  REQUIRE(graphs.size() >= 10);
  std::vector<Case> cases;
  for (const auto& g : graphs)
    for (const auto& [name, a] : matrices)
      for (const char* dtype : {"f64", "f32", "f16"})
        if (std::string(dtype) != "f16" || a.nnz() < 20000) add_case(cases, g, name, a, dtype);
  // Each known format designs on most of them.
  CHECK(cases.size() >= graphs.size() * matrices.size());
  run_cases(cases);
}

TEST_CASE("every known format verifies with 24-bit column words", "[gpu]") {
  // 70,000 columns (17 bits, room for packed row steps) with empty rows, and columns from 2^23
  // (high bytes of 0x80 and more).
  std::vector<std::tuple<std::int64_t, std::int64_t, double>> far;
  for (std::int64_t r = 0; r < 200; ++r)
    for (std::int64_t k = 0; k < r % 7; ++k)
      far.emplace_back(r, 8388608 + (r * 7919 + k * 104729) % 600011, 0.25 + r % 9 - k);
  const std::vector<std::pair<std::string, Csr64>> matrices = {
      {"300x70000, empty rows", test::random_matrix(5, 300, 70000, 0.0004, 0.4)},
      {"200x9000000", test::from_triples(200, 9000000, far)}};
  const auto graphs = search::load_graphs(search::default_graphs_dir());
  std::vector<Case> cases;
  CaseOptions co;
  co.split_words = true;
  for (const auto& g : graphs)
    for (const auto& [name, a] : matrices)
      for (const char* dtype : {"f64", "f32"}) add_case(cases, g, name, a, dtype, co);
  int split = 0;
  for (const auto& c : cases) split += c.source.find("p_nz_col_hi") != std::string::npos;
  INFO(split << " of " << cases.size() << " cases split their column words");
  CHECK(split >= 10);
  run_cases(cases);
}

TEST_CASE("every known format verifies with 64-bit kernel indices", "[gpu]") {
  // The default kernels index in 32 bits wherever everything fits; a design with 64-bit indices
  // keeps the 64-bit arithmetic, the path of matrices past 2^30 entries or rows.
  const auto matrices = test_matrices();
  const auto graphs = search::load_graphs(search::default_graphs_dir());
  std::vector<Case> cases;
  CaseOptions co;
  co.index_bits = 64;
  for (const auto& g : graphs)
    for (const auto& [name, a] : matrices) add_case(cases, g, name, a, "f64", co);
  int wide = 0;
  for (const auto& c : cases)
    wide += c.source.find("typedef long long st_idx_t") != std::string::npos;
  CHECK(wide == static_cast<int>(cases.size()));
  CHECK(cases.size() >= graphs.size() * matrices.size() / 2);
  run_cases(cases);
}

TEST_CASE("thread reductions loading their entries in batches verify", "[gpu]") {
  // THREAD_TOTAL_RED and THREAD_BITMAP_RED with `loads`: batches of 2, 3 and 8 entries, so that
  // threads end inside a batch (the entries past the end are loaded, never summed).
  const auto matrices = test_matrices();
  std::vector<Case> cases;
  int graphs = 0;
  for (auto g : search::load_graphs(search::default_graphs_dir())) {
    bool thread_red = false;
    for (const auto& n : g.ops)
      thread_red = thread_red || n.op == "THREAD_TOTAL_RED" || n.op == "THREAD_BITMAP_RED";
    if (!thread_red) continue;  // a division's branches or tensor cores
    ++graphs;
    for (int loads : {2, 3, 8}) {
      for (auto& n : g.ops)
        if (n.op == "THREAD_TOTAL_RED" || n.op == "THREAD_BITMAP_RED") n.params["loads"] = loads;
      for (const auto& [name, a] : matrices)
        for (const char* dtype : {"f64", "f32"}) {
          const auto before = cases.size();
          add_case(cases, g, name, a, dtype, {{}, nullptr, ", loads " + std::to_string(loads)});
          // A matrix with entries gets a kernel, and that kernel loads in batches.
          if (cases.size() > before && a.nnz() > 0)
            CHECK(cases.back().source.find(std::to_string(loads) + " entries at a time") !=
                  std::string::npos);
        }
    }
  }
  CHECK(graphs >= 8);
  CHECK(cases.size() >= 500);
  run_cases(cases);
}

TEST_CASE("random graphs give kernels that verify", "[gpu]") {
  const auto matrices = test_matrices();
  std::mt19937_64 rng(20261121);
  std::vector<Case> cases;
  int drawn = 0;
  while (cases.size() < 220 && drawn < 2000) {
    const auto g = graph::random_graph(rng);
    const auto& [name, a] = matrices[drawn % matrices.size()];
    ++drawn;
    add_case(cases, g, name, a, drawn % 3 == 0 ? "f32" : "f64");
  }
  REQUIRE(cases.size() >= 200);
  run_cases(cases);
}

TEST_CASE("sparsetune run measures an emitted folder", "[gpu]") {
  testing::TempDir t("sparsetune-gpu-graph");
  const auto a = io::read_matrix((testing::shared_dir() / "matrices" / "dwt_2680.mtx.gz").string());
  const auto g = graph::read_graph(search::default_graphs_dir() + "/csr-vector.json");
  codegen::EmitOptions opt;
  opt.design.dtype = "f32";
  codegen::write_emitted(codegen::generate(g, a, opt), g, (t.path / "out").string());
  search::RunOptions o;
  o.launch = self_launch();
  o.runs = 20;
  const auto r = search::run_emitted((t.path / "out").string(), o);
  INFO(search::to_json(r).dump(2));
  CHECK(r.result.status == "ok");
  CHECK(r.result.verified);
  CHECK(r.result.time_ms.count == 20);
  CHECK(r.result.gflops > 0);
  CHECK(r.device.bandwidth_gbs > 0);
  CHECK(r.result.bandwidth_fraction > 0);
  // The same against the matrix itself.
  const auto mpath = testing::shared_dir() / "matrices" / "dwt_2680.mtx.gz";
  o.matrix_file = mpath.string();
  const auto m = search::run_emitted((t.path / "out").string(), o);
  CHECK(m.result.verified);
}

TEST_CASE("a faulting plan fails alone and the next one runs", "[gpu]") {
  // A kernel that writes far out of bounds: the worker dies, the parent carries on.
  const std::string src = R"(extern "C" __global__ void bad(const float* x, float* y) {
  y[(1LL << 40) + threadIdx.x] = x[0];
})";
  runtime::Worker w(self_launch());
  const auto dev = w.call({{"job", "device"}}, 60);
  REQUIRE(dev.ok);
  runtime::CompileOptions co;
  co.arch = dev.body.at("device").at("arch").get<std::string>();
  const auto c = runtime::compile({"bad", src}, co, nullptr);
  testing::TempDir t("sparsetune-gpu-graph");
  runtime::LaunchPlan p;
  p.name = "bad";
  p.cubin = c.cubin;
  std::vector<char> x(4 * 4, 0), ref(8 * 4, 0);
  p.buffers["x"] = {"F32", x};
  p.buffers["y_ref"] = {"F64", ref};
  runtime::PlanLaunch l;
  l.kernel = "bad";
  l.block[0] = 32;
  l.args = {{runtime::PlanArg::Kind::Buffer, "x"}, {runtime::PlanArg::Kind::Buffer, "y"}};
  p.launches = {l};
  p.output_length = 4;
  p.rows = 4;
  p.cols = 4;
  p.nnz = 4;
  runtime::write_plan(t.path / "bad.safetensors", p);
  const auto r = w.call({{"job", "plan"}, {"plan", (t.path / "bad.safetensors").string()}}, 60);
  CHECK_FALSE(r.ok);
  // A fresh worker runs a good plan.
  const auto g = graph::read_graph(search::default_graphs_dir() + "/csr-scalar.json");
  const auto a = test::random_matrix(9, 50, 40, 0.1, 0.2);
  std::vector<Case> cases;
  REQUIRE(add_case(cases, g, "random 50x40", a, "f64") == 1);
  run_cases(cases);
}
