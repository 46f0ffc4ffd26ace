// The host side of the SpTV search's designs (every slice in CSR, COO, ELL or HYB, and a mix):
// the Optimizer fits its arrays' formulas on several threads, and the view beneath is built on
// several; the format binary and the kernels must be the same bytes on 1 thread and on 7.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <random>

#include "codegen/emit.hpp"
#include "codegen/optimizer.hpp"
#include "core/sptv_matrix.hpp"
#include "graph/sptv_graph.hpp"

using namespace sparsetune;

namespace {
codegen::Emitted design_on(int threads, const SparseTensor& t, int mode,
                           const std::vector<graph::SliceFormat>& pick) {
  ::setenv("SPARSETUNE_THREADS", std::to_string(threads).c_str(), 1);
  const SptvMatrix m = sptv_matrix(t, mode);
  std::vector<graph::SliceFormat> format_of(m.slices);
  for (std::int64_t s = 0; s < m.slices; ++s) format_of[s] = pick[s % pick.size()];
  const auto g = graph::sptv_graph(format_of, graph::slice_stats(m), 3);
  codegen::EmitOptions o;
  o.design = graph::sptv_design_options(m, "f32");
  o.sptv = graph::sptv_slices(m, format_of);
  auto e = codegen::generate(g, m.a, o);
  ::unsetenv("SPARSETUNE_THREADS");
  return e;
}
}  // namespace

TEST_CASE("SpTV designs are the same bytes on 1 and on 7 threads", "[codegen][sptv][parallel]") {
  std::mt19937_64 rng(21);
  SparseTensor t;
  t.dims = {30, 500, 400};
  t.idx.resize(3);
  for (int k = 0; k < 120000; ++k) {
    const auto i = static_cast<std::int64_t>(rng() % 30);
    t.idx[0].push_back(i * i / 30);
    t.idx[1].push_back(static_cast<std::int64_t>(rng() % 500));
    t.idx[2].push_back(static_cast<std::int64_t>(rng() % 400));
    t.val.push_back(static_cast<double>(rng() % 1000) / 7.0);
  }
  using F = graph::SliceFormat;
  for (const auto& pick : std::vector<std::vector<F>>{
           {F::CSR}, {F::COO}, {F::ELL}, {F::HYB}, {F::CSR, F::COO, F::ELL, F::HYB}})
    for (int mode : {0, 2}) {
      INFO("mode " << mode << ", first format " << graph::slice_format_name(pick[0]));
      const auto one = design_on(1, t, mode, pick);
      const auto many = design_on(7, t, mode, pick);
      CHECK(one.format_bytes == many.format_bytes);
      CHECK(one.kernels.source == many.kernels.source);
      CHECK(one.host_header == many.host_header);
      CHECK(one.report.modeled == many.report.modeled);
    }
}

TEST_CASE("fit_model: repeated candidates and an exact fit give the first best model",
          "[codegen][optimizer]") {
  std::vector<std::int64_t> identity(100000);
  for (std::size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<std::int64_t>(i);
  const auto m = codegen::fit_model(identity, 8);
  CHECK(m.kind == graph::ArrayModel::Kind::Linear);
  CHECK(m.a == 1);
  CHECK(m.b == 0);
  CHECK(m.exceptions.empty());
  // A line with two misses: the fit keeps the line and lists them.
  auto bent = identity;
  bent[10] = -5;
  bent[99990] = 7;
  const auto b = codegen::fit_model(bent, 8);
  CHECK(b.kind == graph::ArrayModel::Kind::Linear);
  CHECK(b.exceptions == std::vector<std::pair<std::int64_t, std::int64_t>>{{10, -5}, {99990, 7}});
}
