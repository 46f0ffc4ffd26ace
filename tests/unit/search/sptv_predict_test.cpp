// search::predict_sptv_design, the design `tune --op sptv --budget 0` emits: the selection's bytes
// are its whole design's, the single formats' are those of their whole designs where the sample
// takes every slice; the fewest bytes win, a tie keeps the selection, and a format the selection
// gives every slice is not a candidate twice.
#include "search/sptv_predict.hpp"

#include <catch2/catch.hpp>
#include <limits>

#include "core/sptv_matrix.hpp"
#include "features/slice_graph.hpp"
#include "gen/random_tensor.hpp"
#include "graph/format.hpp"
#include "graph/sptv_graph.hpp"

using namespace sparsetune;
using F = graph::SliceFormat;

namespace {

// 2,000 distinct entries of a 16 x 60 x 50 tensor.
SparseTensor small_tensor() {
  gen::RandomTensorParams p;
  p.dims = {16, 60, 50};
  p.nnz = 2000;
  return gen::random_tensor(p, 11);
}

std::vector<models::SliceChoice> every_slice(const std::vector<features::SliceInput>& inputs, F f) {
  std::vector<models::SliceChoice> c;
  for (const auto& in : inputs) c.push_back({in.slice, static_cast<int>(f), "t"});
  return c;
}

// A mode's matrix view of the tensor (sliced along its smallest other mode) and its design context.
struct View {
  SptvMatrix m;
  std::vector<features::SliceInput> inputs;
  search::SptvDesignContext c;
  View(const SparseTensor& t, int mode)
      : m(sptv_matrix(t, mode, -1)),
        inputs(features::slice_inputs(m)),
        c{m, inputs, graph::slice_stats(m), {}, 2, 1, "t"} {
    c.emit.design = graph::sptv_design_options(m, "f32");
  }
};

// A mix: every third slice ELL, the others COO.
std::vector<models::SliceChoice> coo_ell_mix(const std::vector<features::SliceInput>& inputs) {
  std::vector<models::SliceChoice> mix;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    mix.push_back({inputs[i].slice, static_cast<int>(i % 3 ? F::COO : F::ELL), "t"});
  return mix;
}

// Every slice sampled; COO never sorted.
search::SptvPredictOptions whole(const SptvMatrix& m) {
  return {.by_kernels = true,
          .sample_nnz = m.a.nnz(),
          .sorted_coo_from = std::numeric_limits<std::int64_t>::max()};
}

// Bytes an entry of the whole view's design.
double bytes_per_entry(const search::SptvDesignContext& c, std::vector<models::SliceChoice> ch) {
  const auto d = search::design_sptv(c, std::move(ch));
  return static_cast<double>(graph::stored_bytes(d.emitted.format)) /
         static_cast<double>(c.view.a.nnz());
}

}  // namespace

TEST_CASE("the predicted SpTV design is the candidate with the fewest bytes an entry",
          "[search][sptv]") {
  const SparseTensor t = small_tensor();
  for (int mode : {0, 1, 2}) {
    INFO("mode " << mode);
    const View v(t, mode);
    const auto& [m, inputs, c] = v;
    REQUIRE(inputs.size() >= 4);
    const auto mix = coo_ell_mix(inputs);
    const auto selected = search::design_sptv(c, mix);
    const auto p = search::predict_sptv_design(c, selected, whole(m));  // every slice sampled

    const std::vector<std::string> names = {"selected", "all CSR", "all COO", "all ELL", "all HYB"};
    std::vector<double> expect = {bytes_per_entry(c, mix)};
    for (F f : {F::CSR, F::COO, F::ELL, F::HYB})
      expect.push_back(bytes_per_entry(c, every_slice(inputs, f)));
    REQUIRE(p.candidates.size() == names.size());
    std::size_t best = 0;
    for (std::size_t i = 0; i < names.size(); ++i) {
      CHECK(p.candidates[i]["design"] == names[i]);
      CHECK(p.candidates[i]["bytes_per_entry"].get<double>() == Approx(expect[i]));
      if (expect[i] < expect[best] * (1 - 1e-12)) best = i;
    }
    for (std::size_t i = 0; i < names.size(); ++i) CHECK(p.candidates[i]["picked"] == (i == best));
    CHECK(p.design == names[best]);
    CHECK(p.candidates[0]["by_format"]["ELL"] == static_cast<int>((inputs.size() + 2) / 3));
    // The choices of a picked single format give it every slice the selection held.
    const auto ch = p.choices();
    if (best == 0) {
      CHECK(p.format == -1);
      CHECK(ch.empty());
    } else {
      CHECK(p.format == static_cast<int>(best) - 1);
      REQUIRE(ch.size() == inputs.size());
      for (std::size_t i = 0; i < ch.size(); ++i) {
        CHECK(ch[i].slice == inputs[i].slice);
        CHECK(ch[i].format == p.format);
        CHECK(ch[i].by == "fewest bytes");
      }
    }
  }
}

TEST_CASE("a selection of one format is not a candidate twice, and wins a tie", "[search][sptv]") {
  const SparseTensor t = small_tensor();
  const View v(t, 2);
  const auto& [m, inputs, c] = v;
  for (F f : {F::CSR, F::COO, F::ELL, F::HYB}) {
    INFO(graph::slice_format_name(f));
    const auto p =
        search::predict_sptv_design(c, search::design_sptv(c, every_slice(inputs, f)), whole(m));
    REQUIRE(p.candidates.size() == 4);
    for (const auto& row : p.candidates)
      if (row["design"] != "selected")
        CHECK(row["design"] != std::string("all ") + graph::slice_format_name(f));
    // Fewer bytes than the selection's own: a single format; else the selection.
    double least = std::numeric_limits<double>::infinity();
    for (std::size_t i = 1; i < p.candidates.size(); ++i)
      least = std::min(least, p.candidates[i]["bytes_per_entry"].get<double>());
    const double own = p.candidates[0]["bytes_per_entry"].get<double>();
    CHECK((p.design == "selected") == (own <= least));
  }
  // Dense for every slice is a selection too; its bytes are every column of every fiber.
  const auto dense = search::design_sptv(c, every_slice(inputs, F::Dense));
  const auto p = search::predict_sptv_design(c, dense, whole(m));
  CHECK(p.candidates.size() == 5);
  CHECK(p.candidates[0]["bytes_per_entry"].get<double>() ==
        Approx(static_cast<double>(graph::stored_bytes(dense.emitted.format)) /
               static_cast<double>(m.a.nnz())));
}

TEST_CASE("all COO is predicted in column-sorted blocks from a size on when ranked by the kernels",
          "[search][sptv]") {
  const SparseTensor t = small_tensor();
  const View v(t, 0);  // COO stores the fewest bytes here
  const auto& [m, inputs, c] = v;
  // The selection all COO: kept as it is below the size, or ranked by transfers.
  const auto coo = search::design_sptv(c, every_slice(inputs, F::COO));
  auto o = whole(m);
  auto p = search::predict_sptv_design(c, coo, o);
  REQUIRE(p.design == "selected");
  {
    CHECK(p.format == -1);
    CHECK_FALSE(p.coo_sorted);
    o.sorted_coo_from = m.a.nnz();  // from this view's size on
    o.by_kernels = false;
    CHECK(search::predict_sptv_design(c, coo, o).design == "selected");
    o.by_kernels = true;
    p = search::predict_sptv_design(c, coo, o);
    CHECK(p.design == "all COO, column-sorted blocks");
    CHECK(p.format == static_cast<int>(F::COO));
    CHECK(p.coo_sorted);
    CHECK(p.choices().size() == inputs.size());
  }
  // A mix whose bytes lose to all COO: column-sorted from the size on, atomic below it.
  std::vector<models::SliceChoice> mix = every_slice(inputs, F::COO);
  mix[0].format = static_cast<int>(F::ELL);
  const auto mixed = search::design_sptv(c, mix);
  o = whole(m);
  p = search::predict_sptv_design(c, mixed, o);
  REQUIRE(p.design == "all COO");
  {
    CHECK_FALSE(p.coo_sorted);
    o.sorted_coo_from = m.a.nnz();
    p = search::predict_sptv_design(c, mixed, o);
    CHECK(p.design == "all COO, column-sorted blocks");
    CHECK(p.coo_sorted);
    o.by_kernels = false;
    CHECK(search::predict_sptv_design(c, mixed, o).design == "all COO");
  }
}

TEST_CASE("sampled candidates in a close contest are designed whole, and the one picked is kept",
          "[search][sptv]") {
  const SparseTensor t = small_tensor();
  for (int mode : {0, 1, 2}) {
    INFO("mode " << mode);
    const View v(t, mode);
    const auto& [m, inputs, c] = v;
    const auto selected = search::design_sptv(c, coo_ell_mix(inputs));
    auto o = whole(m);
    o.sample_nnz = m.a.nnz() / 4;  // every fourth slice or so
    o.whole_within = 0;            // never: every single format sampled
    const auto sampled = search::predict_sptv_design(c, selected, o);
    for (std::size_t i = 1; i < sampled.candidates.size(); ++i)
      CHECK(sampled.candidates[i]["sampled"] == true);
    CHECK_FALSE(sampled.whole);
    o.whole_within = 100;  // every single format is close: all designed whole
    const auto p = search::predict_sptv_design(c, selected, o);
    REQUIRE(p.candidates.size() == 5);
    std::size_t best = 0;
    for (std::size_t i = 1; i < p.candidates.size(); ++i) {
      CHECK(p.candidates[i]["sampled"] == false);
      const double exact = bytes_per_entry(c, every_slice(inputs, static_cast<F>(i - 1)));
      CHECK(p.candidates[i]["bytes_per_entry"].get<double>() == Approx(exact));
      if (exact < p.candidates[best]["bytes_per_entry"].get<double>() * (1 - 1e-12)) best = i;
    }
    CHECK(p.candidates[best]["picked"] == true);
    // The picked single format's whole design comes back, to be emitted as it is.
    CHECK(static_cast<bool>(p.whole) == (best > 0));
    if (p.whole) {
      CHECK(p.whole->count[best - 1] == static_cast<int>(inputs.size()));
      CHECK(graph::stored_bytes(p.whole->emitted.format) ==
            Approx(p.candidates[best]["bytes_per_entry"].get<double>() *
                   static_cast<double>(m.a.nnz())));
    }
  }
}
