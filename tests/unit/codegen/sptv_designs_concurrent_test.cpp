// The SpTV search designs several formats at once on host threads (each single format ahead of
// its GPU runs, the two batched cuts of a design together), each design itself on
// SPARSETUNE_THREADS threads: every design must be the same bytes as one built alone on one
// thread, on a tensor with empty slices and slices of one entry.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <future>
#include <random>

#include "codegen/emit.hpp"
#include "core/sptv_matrix.hpp"
#include "graph/sptv_graph.hpp"

using namespace sparsetune;

namespace {
// Slices 0..19 of mode 0 hold skewed random entries, 20..29 none, 30..39 one entry each.
SparseTensor sparse_slices() {
  std::mt19937_64 rng(5);
  SparseTensor t;
  t.dims = {40, 3000, 2000};
  t.idx.resize(3);
  const auto add = [&](std::int64_t i) {
    t.idx[0].push_back(i);
    t.idx[1].push_back(static_cast<std::int64_t>(rng() % 3000));
    t.idx[2].push_back(static_cast<std::int64_t>(rng() % 2000));
    t.val.push_back(static_cast<double>(rng() % 1000) / 7.0 + 1.0);
  };
  // Enough entries (over 2^17 per part) for COMPRESS and the Designer's write counts to run on
  // several threads.
  for (int k = 0; k < 400000; ++k) {
    const auto u = static_cast<std::int64_t>(rng() % 20);
    add(u * u / 20);
  }
  for (std::int64_t i = 30; i < 40; ++i) add(i);
  return t;  // repeats of a coordinate are summed by the view
}

struct Case {
  std::vector<graph::SliceFormat> format_of;
  graph::Graph graph;
};

codegen::Emitted emit(const SptvMatrix& m, const Case& c) {
  codegen::EmitOptions o;
  o.design = graph::sptv_design_options(m, "f32");
  o.sptv = graph::sptv_slices(m, c.format_of);
  return codegen::generate(c.graph, m.a, o);
}
}  // namespace

TEST_CASE("SpTV designs built at once on threads equal those built alone on one thread",
          "[codegen][sptv][parallel]") {
  const SparseTensor t = sparse_slices();
  using F = graph::SliceFormat;
  for (int mode : {1, 2}) {
    const SptvMatrix m = sptv_matrix(t, mode, 0);
    const auto stats = graph::slice_stats(m);
    REQUIRE(m.slices == 40);
    std::vector<Case> cases;
    for (const auto& pick : std::vector<std::vector<F>>{
             {F::CSR}, {F::COO}, {F::ELL}, {F::HYB}, {F::CSR, F::COO, F::ELL, F::HYB}}) {
      Case c;
      for (std::int64_t s = 0; s < m.slices; ++s) c.format_of.push_back(pick[s % pick.size()]);
      c.graph = graph::sptv_graph(c.format_of, stats, 2);
      cases.push_back(c);
      for (int cut : {16, 1}) {
        c.graph = graph::sptv_batched_graph(c.format_of, stats, 2, cut).graph;
        cases.push_back(c);
      }
    }
    ::setenv("SPARSETUNE_THREADS", "1", 1);
    std::vector<codegen::Emitted> alone;
    for (const auto& c : cases) alone.push_back(emit(m, c));
    ::setenv("SPARSETUNE_THREADS", "5", 1);
    std::vector<std::future<codegen::Emitted>> at_once;
    for (const auto& c : cases)
      at_once.push_back(std::async(std::launch::async, [&m, &c] { return emit(m, c); }));
    for (std::size_t i = 0; i < cases.size(); ++i) {
      INFO("mode " << mode << ", design " << i);
      const auto e = at_once[i].get();
      CHECK(e.format_bytes == alone[i].format_bytes);
      CHECK(e.kernels.source == alone[i].kernels.source);
      CHECK(e.host_header == alone[i].host_header);
    }
    ::unsetenv("SPARSETUNE_THREADS");
  }
}
