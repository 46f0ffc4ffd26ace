// search::sampled_bytes_per_entry, by which a search ranked by transfers orders the single
// formats: a sample of every slice is the whole view's bytes exactly; every third slice comes
// within 10 % of them and keeps their order where they differ by more.
#include <catch2/catch.hpp>
#include <random>

#include "core/sptv_matrix.hpp"
#include "features/slice_graph.hpp"
#include "graph/sptv_graph.hpp"
#include "search/sptv_designs.hpp"

using namespace sparsetune;

namespace {
// 400 slices along mode 0, their sizes skewed (slice a·b / 400 for a, b uniform), about 300,000
// entries: enough slices that every third one is a fair sample.
SparseTensor many_slices() {
  std::mt19937_64 rng(9);
  SparseTensor t;
  t.dims = {400, 3000, 2000};
  t.idx.resize(3);
  for (int k = 0; k < 300000; ++k) {
    const auto a = static_cast<std::int64_t>(rng() % 400),
               b = static_cast<std::int64_t>(rng() % 400);
    t.idx[0].push_back(a * b / 400);
    t.idx[1].push_back(static_cast<std::int64_t>(rng() % 3000));
    t.idx[2].push_back(static_cast<std::int64_t>(rng() % 2000));
    t.val.push_back(static_cast<double>(rng() % 1000) / 7.0 + 1.0);
  }
  return t;
}
}  // namespace

TEST_CASE("the single formats' bytes sampled on every k-th slice match the whole view's",
          "[codegen][sptv][search]") {
  const SparseTensor t = many_slices();
  using F = graph::SliceFormat;
  const std::vector<F> formats = {F::CSR, F::COO, F::ELL, F::HYB};
  for (int mode : {1, 2}) {
    const SptvMatrix m = sptv_matrix(t, mode, 0);
    const auto inputs = features::slice_inputs(m);
    search::SptvDesignContext c{m, inputs, graph::slice_stats(m), {}, 2, 1, "t"};
    c.emit.design = graph::sptv_design_options(m, "f32");
    // The whole view, one design per format.
    std::vector<double> whole;
    for (const auto f : formats) {
      std::vector<models::SliceChoice> choices;
      for (const auto& in : inputs) choices.push_back({in.slice, static_cast<int>(f), "t"});
      const auto d = search::design_sptv(c, std::move(choices));
      whole.push_back(static_cast<double>(graph::stored_bytes(d.emitted.format)) /
                      static_cast<double>(m.a.nnz()));
    }
    // A sample as large as the view takes every slice: the same bytes exactly.
    const auto all = search::sampled_bytes_per_entry(c, formats, m.a.nnz());
    for (std::size_t i = 0; i < formats.size(); ++i) CHECK(all[i] == Approx(whole[i]));
    // Every third slice (about a third of the entries): within 10 % of the whole, and in the same
    // order wherever the whole view's bytes differ by more than that.
    const auto part = search::sampled_bytes_per_entry(c, formats, m.a.nnz() / 3);
    for (std::size_t i = 0; i < formats.size(); ++i) {
      INFO("mode " << mode << ", " << graph::slice_format_name(formats[i]) << ": sampled "
                   << part[i] << " B, whole " << whole[i] << " B an entry");
      CHECK(part[i] == Approx(whole[i]).epsilon(0.10));
      for (std::size_t j = 0; j < formats.size(); ++j)
        if (whole[i] < 0.8 * whole[j]) CHECK(part[i] < part[j]);
    }
  }
}
