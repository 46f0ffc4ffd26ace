// Model-driven compression: fitted formulas reproduce every value (exceptions included), narrow
// types hold every value, and the optimized format computes exactly what the plain one does.
#include "codegen/optimizer.hpp"

#include <catch2/catch.hpp>

#include "../graph/graph_test_util.hpp"
#include "codegen/kernel_builder.hpp"
#include "codegen_test_util.hpp"
#include "core/convert.hpp"
#include "core/reference.hpp"
#include "graph/designer.hpp"
#include "graph/format.hpp"
#include "graph/interpreter.hpp"
#include "runtime/nvrtc.hpp"
#include "test_support.hpp"

using namespace sparsetune;
using namespace sparsetune::codegen;
using Kind = graph::ArrayModel::Kind;

namespace {
void require_reproduces(const graph::ArrayModel& m, const std::vector<std::int64_t>& v) {
  for (std::size_t i = 0; i < v.size(); ++i) REQUIRE(m.eval(static_cast<std::int64_t>(i)) == v[i]);
}
}  // namespace

TEST_CASE("fit_model finds the simplest formula", "[codegen]") {
  std::vector<std::int64_t> v(100, 7);
  auto m = fit_model(v, 8);
  REQUIRE(m.kind == Kind::Constant);
  REQUIRE(m.a == 7);

  for (std::int64_t i = 0; i < 100; ++i) v[i] = 64 * i + 3;  // Fig. 8: row_offset = 64 * bid
  m = fit_model(v, 8);
  REQUIRE(m.kind == Kind::Linear);
  REQUIRE((m.a == 64 && m.b == 3 && m.exceptions.empty()));

  for (std::int64_t i = 0; i < 100; ++i) v[i] = 5 * (i / 4) - 2;  // step
  m = fit_model(v, 8);
  REQUIRE(m.kind == Kind::Step);
  REQUIRE((m.p == 4 && m.a == 5 && m.b == -2));
  require_reproduces(m, v);

  for (std::int64_t i = 0; i < 100; ++i) v[i] = 3 * (i % 10) + 1000 * (i / 10) + 1;  // periodic
  m = fit_model(v, 8);
  REQUIRE(m.kind == Kind::Periodic);
  REQUIRE((m.p == 10 && m.a == 3 && m.b == 1000 && m.c == 1));
  require_reproduces(m, v);

  // A linear array with three misfits keeps them as exceptions.
  for (std::int64_t i = 0; i < 100; ++i) v[i] = 2 * i;
  v[0] = 9, v[50] = -1, v[99] = 4;
  m = fit_model(v, 8);
  REQUIRE(m.kind == Kind::Linear);
  REQUIRE(m.exceptions.size() == 3);
  require_reproduces(m, v);
  REQUIRE(fit_model(v, 2).kind == Kind::Stored);

  // No formula for scattered values.
  std::mt19937_64 rng(5);
  for (auto& x : v) x = static_cast<std::int64_t>(rng() % 1000);
  REQUIRE(fit_model(v, 8).kind == Kind::Stored);
  // Values whose formula would overflow 64-bit arithmetic stay stored.
  v = {0, std::int64_t{1} << 61, std::int64_t{1} << 62, 5, 6, 7, 8, 9};
  REQUIRE(fit_model(v, 0).kind == Kind::Stored);
}

TEST_CASE("optimized formats compute exactly what plain ones do", "[codegen]") {
  auto matrices = test::edge_matrices();
  matrices.push_back(test::shared_matrices()[1]);
  matrices.push_back(test::shared_matrices()[4]);
  std::vector<graph::Graph> graphs = test::known_graphs();
  std::mt19937_64 rng(99);
  for (int i = 0; i < 60; ++i) graphs.push_back(graph::random_graph(rng));
  int designed = 0, modeled = 0, narrowed = 0;
  for (const auto& g : graphs)
    for (const auto& [name, a] : matrices) {
      INFO(graph::describe(g) << " on " << name);
      graph::Format f;
      try {
        f = graph::design(g, a);
      } catch (const graph::DesignError&) {
        continue;
      }
      ++designed;
      const auto x = test::test_x(a.cols);
      const auto plain = graph::interpret(f, x);
      const auto r = optimize(f);
      modeled += r.modeled;
      narrowed += r.narrowed;
      REQUIRE(r.bytes_after <= r.bytes_before);
      REQUIRE(graph::interpret(f, x) == plain);  // same arrays, same order of operations
      for (const auto& p : f.parts)
        for (const auto& [n, arr] : p.arrays) {
          if (!arr.stored() || arr.dtype[0] == 'F' || arr.ints.empty()) continue;
          const auto [lo, hi] = std::minmax_element(arr.ints.begin(), arr.ints.end());
          REQUIRE(graph::int_dtype_for(*lo, *hi, f.index_bits) == arr.dtype);
        }
    }
  REQUIRE(designed > 200);
  REQUIRE(modeled > designed);  // most formats have several formula arrays
  REQUIRE(narrowed > 0);
}

TEST_CASE("CSR-scalar keeps only what a formula cannot give", "[codegen]") {
  const Csr64 a = test::random_matrix(21, 300, 300, 0.02, 0.2);
  graph::Graph g;
  for (const auto& k : test::known_graphs())
    if (k.name == "csr-scalar") g = k;
  graph::Format f = graph::design(g, a);
  optimize(f);
  const auto& p = f.parts[0];
  // One thread per row: sizes vary, first entries and rows are positions.
  REQUIRE(p.array(graph::Arr::bmt_row).model.kind == Kind::Linear);
  REQUIRE(p.array(graph::Arr::origin_row).model.kind == Kind::Linear);
  REQUIRE(p.array(graph::Arr::bmt_stride).model.kind == Kind::Constant);
  REQUIRE(p.array(graph::Arr::bmw_first_bmt).model.kind != Kind::Stored);
  REQUIRE(p.array(graph::Arr::bmt_size).stored());
  REQUIRE(p.array(graph::Arr::bmt_size).dtype != "I32");
  REQUIRE(p.array(graph::Arr::nz_col).dtype == "I16");
  REQUIRE(p.single_thread_round);
  REQUIRE(p.single_warp_round);
}

TEST_CASE("fit_model finds a clamped table model for a named period", "[codegen]") {
  // Diagonals -2, 0 and 3 of a 5 x 5 matrix, slot by slot, columns clamped into [0, 4].
  const std::vector<std::int64_t> v = {0, 0, 0, 1, 2, 0, 1, 2, 3, 4, 3, 4, 4, 4, 4};
  REQUIRE(fit_model(v, 0).kind == Kind::Stored);  // no period named, no simpler formula
  const auto m = fit_model(v, 0, {5});
  REQUIRE(m.kind == Kind::Table);
  REQUIRE((m.a == 1 && m.p == 5 && m.b == 0 && m.c == 4));
  REQUIRE(m.table == std::vector<std::int64_t>{-2, 0, 3});
  require_reproduces(m, v);
  // A period that does not divide the length, or an array a simpler kind fits, is not a table.
  REQUIRE(fit_model(v, 0, {4}).kind == Kind::Stored);
  std::vector<std::int64_t> periodic(100);
  for (std::int64_t i = 0; i < 100; ++i) periodic[i] = (i % 10) + 1000 * (i / 10);
  REQUIRE(fit_model(periodic, 0, {10}).kind == Kind::Periodic);
}

TEST_CASE("dia-hybrid stores no column indices for a stencil's diagonals", "[codegen]") {
  // 5-point Laplacian on a 12 x 12 grid: every row gets one slot per diagonal.
  const std::int64_t n = 12, rows = n * n;
  const Csr64 a = test::stencil5(n);
  graph::Graph g;
  for (const auto& k : test::known_graphs())
    if (k.name == "dia-hybrid") g = k;
  REQUIRE(g.name == "dia-hybrid");
  graph::Format f = graph::design(g, a);
  optimize(f);
  const auto& col = f.parts[0].array(graph::Arr::nz_col);
  REQUIRE(col.model.kind == Kind::Table);
  REQUIRE(col.model.table == std::vector<std::int64_t>{-n, -1, 0, 1, n});
  REQUIRE((col.model.b == 0 && col.model.c == rows - 1 && col.model.p == rows));
  REQUIRE(f.parts[0].nnz_stored == 5 * rows);  // boundary slots hold explicit zeros
  REQUIRE(f.parts[1].nnz_stored == 0);         // nothing is left off the diagonals

  const auto x = test::test_x(a.cols);
  const auto ref = spmv_reference(a, x);
  REQUIRE(relative_l2_error(graph::interpret(f, x), ref) < 1e-14);
  // The model survives the format binary.
  testing::TempDir dir("sparsetune-table");
  const auto path = (dir.path / "format.safetensors").string();
  graph::write_format(path, f, "test");
  const graph::Format back = graph::read_format(path);
  REQUIRE(back.parts[0].array(graph::Arr::nz_col).model.table == col.model.table);
  REQUIRE(graph::interpret(back, x) == graph::interpret(f, x));
  // The kernel keeps the offsets in a constant array and compiles for sm_90.
  const auto k = build_kernels(f, g.name, "test");
  REQUIRE(k.source.find("st_p0_nz_col_t[5]") != std::string::npos);
  test::require_all_compile({{"dia", k.source}});
}
