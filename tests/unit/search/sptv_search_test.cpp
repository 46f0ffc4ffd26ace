// search::search_sptv_designs with a stand-in for the GPU: the predicted design first (the
// selection, or a single format with the selection measured after the others), then every
// single format; the fastest verified design kept; a design built ahead within the budget is
// measured even when the budget has run out before its turn; the rest are listed as not measured.
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "core/sptv_matrix.hpp"
#include "features/slice_graph.hpp"
#include "gen/random_tensor.hpp"
#include "graph/sptv_graph.hpp"
#include "search/sptv_designs.hpp"

using namespace sparsetune;
using F = graph::SliceFormat;

namespace {

// 600 distinct entries of a 12 x 30 x 40 tensor.
SparseTensor small_tensor() {
  gen::RandomTensorParams p;
  p.dims = {12, 30, 40};
  p.nnz = 600;
  return gen::random_tensor(p, 3);
}

// The one format a design stores every slice in, or -1 for a mix.
int single_format(const search::SptvDesign& d) {
  for (int f = 0; f < graph::kSliceFormats; ++f)
    if (d.count[static_cast<std::size_t>(f)] == static_cast<int>(d.choices.size())) return f;
  return -1;
}

nlohmann::json ran(double ms, bool verified = true) {
  return {{"ran", true}, {"verified", verified}, {"time_ms", {{"median", ms}}}};
}

}  // namespace

TEST_CASE("the SpTV search keeps the fastest verified design and lists every one",
          "[search][sptv]") {
  const SparseTensor t = small_tensor();
  const SptvMatrix m = sptv_matrix(t, 1, 0);
  const auto inputs = features::slice_inputs(m);
  search::SptvDesignContext c{m, inputs, graph::slice_stats(m), {}, 2, 1, "t"};
  c.emit.design = graph::sptv_design_options(m, "f32");
  // The selection: alternate CSR and COO slices.
  std::vector<models::SliceChoice> mix;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    mix.push_back({inputs[i].slice, static_cast<int>(i % 2 ? F::COO : F::CSR), "t"});
  const codegen::PlanInputs plan;
  search::SptvSearchOptions o;
  o.budget_s = 60;
  o.ahead = 1;

  SECTION("every single format measured; ELL fastest, HYB not verified") {
    std::vector<int> order;
    o.run = [&](const search::SptvDesign& d, const std::function<void()>& on_device) {
      on_device();
      const int f = single_format(d);
      order.push_back(d.coo_sorted() ? 10 + f : f);
      switch (f) {
        case static_cast<int>(F::ELL):
          return ran(2.0);
        case static_cast<int>(F::HYB):
          return ran(1.0, false);  // fastest, but wrong: never kept
        case -1:
          return ran(5.0);
        default:
          return ran(3.0 + f);
      }
    };
    std::string arch;
    const auto s = search::search_sptv_designs(c, search::design_sptv(c, mix), t, plan, o, &arch);
    // The selection, then CSR, COO, ELL, HYB, and COO in column-sorted blocks (ranked by kernels).
    CHECK(order == std::vector<int>{-1, 0, 1, 2, 3, 11});
    REQUIRE(s.rows.size() == 6);
    CHECK(s.rows[5]["design"] == "all COO, column-sorted blocks");
    CHECK(s.rows[5]["time_ms"] == 4.0);
    CHECK(s.rows[0]["design"] == "selected");
    CHECK(s.rows[0]["predicted"] == true);
    for (std::size_t i = 1; i < s.rows.size(); ++i) CHECK_FALSE(s.rows[i].contains("predicted"));
    // The selection's slices by format stay in its row after ELL won: half CSR, half COO.
    const auto half = static_cast<int>(inputs.size() / 2);
    CHECK(s.rows[0]["by_format"] == nlohmann::json{{"CSR", static_cast<int>(inputs.size()) - half},
                                                   {"COO", half},
                                                   {"ELL", 0},
                                                   {"HYB", 0},
                                                   {"Dense", 0}});
    CHECK_FALSE(s.rows[3].contains("by_format"));
    CHECK(s.rows[3]["design"] == "all ELL");
    CHECK(s.rows[3]["time_ms"] == 2.0);
    CHECK(s.rows[4].contains("note"));
    CHECK(single_format(s.best) == static_cast<int>(F::ELL));
    REQUIRE(s.gpu);
    CHECK((*s.gpu)["time_ms"]["median"] == 2.0);
  }

  SECTION("a single format predicted instead: measured first, the selection after the others") {
    std::vector<int> order;
    o.run = [&](const search::SptvDesign& d, const std::function<void()>& on_device) {
      on_device();
      const int f = single_format(d);
      order.push_back(d.coo_sorted() ? 10 + f : f);
      return ran(f == -1 ? 1.5 : 3.0 + f);  // the selection fastest
    };
    o.first_label = "all HYB";
    o.selection = mix;
    std::vector<models::SliceChoice> hyb;
    for (const auto& in : inputs) hyb.push_back({in.slice, static_cast<int>(F::HYB), "t"});
    std::string arch;
    const auto s = search::search_sptv_designs(c, search::design_sptv(c, hyb), t, plan, o, &arch);
    // HYB (predicted), CSR, COO, ELL, COO in column-sorted blocks, and the selection.
    CHECK(order == std::vector<int>{3, 0, 1, 2, 11, -1});
    REQUIRE(s.rows.size() == 6);
    CHECK(s.rows[0]["design"] == "all HYB");
    CHECK(s.rows[0]["predicted"] == true);
    CHECK(s.rows[5]["design"] == "selected");
    CHECK(s.rows[5]["time_ms"] == 1.5);
    CHECK(s.rows[5]["by_format"]["COO"] == static_cast<int>(inputs.size() / 2));
    CHECK(single_format(s.best) == -1);  // measured fastest, so kept
  }

  SECTION("column-sorted COO predicted: atomic COO measured instead of it a second time") {
    std::vector<int> order;
    o.run = [&](const search::SptvDesign& d, const std::function<void()>& on_device) {
      on_device();
      const int f = single_format(d);
      order.push_back(d.coo_sorted() ? 10 + f : f);
      return ran(3.0 + f);
    };
    o.first_label = "all COO, column-sorted blocks";
    o.selection = mix;
    std::vector<models::SliceChoice> coo;
    for (const auto& in : inputs) coo.push_back({in.slice, static_cast<int>(F::COO), "t"});
    std::string arch;
    const auto s =
        search::search_sptv_designs(c, search::design_sptv(c, coo, true), t, plan, o, &arch);
    // Sorted COO (predicted), CSR, COO, ELL, HYB, then the selection.
    CHECK(order == std::vector<int>{11, 0, 1, 2, 3, -1});
    REQUIRE(s.rows.size() == 6);
    CHECK(s.rows[0]["design"] == "all COO, column-sorted blocks");
    CHECK(s.rows[2]["design"] == "all COO");
    CHECK(s.rows[5]["design"] == "selected");
  }

  SECTION("a design built ahead is measured after the budget ran out; later ones are not") {
    o.budget_s = 0.2;
    o.run = [&](const search::SptvDesign& d, const std::function<void()>& on_device) {
      on_device();  // starts the first single format's design (one ahead)
      if (single_format(d) == -1) std::this_thread::sleep_for(std::chrono::milliseconds(400));
      return ran(single_format(d) == static_cast<int>(F::CSR) ? 1.0 : 5.0);
    };
    std::string arch;
    const auto s = search::search_sptv_designs(c, search::design_sptv(c, mix), t, plan, o, &arch);
    REQUIRE(s.rows.size() == 6);
    CHECK(s.rows[1]["design"] == "all CSR");
    CHECK(s.rows[1]["time_ms"] == 1.0);
    for (std::size_t i = 2; i < 6; ++i) CHECK(s.rows[i]["note"] == "not measured: budget spent");
    CHECK(single_format(s.best) == static_cast<int>(F::CSR));
  }

  SECTION("a selection the GPU cannot run ends the search") {
    o.run = [&](const search::SptvDesign&, const std::function<void()>&) {
      return nlohmann::json{{"ran", false}, {"note", "no GPU"}};
    };
    std::string arch;
    const auto s = search::search_sptv_designs(c, search::design_sptv(c, mix), t, plan, o, &arch);
    REQUIRE(s.rows.size() == 1);
    CHECK(s.rows[0]["note"] == "no GPU");
    CHECK_FALSE(s.gpu);
    CHECK(single_format(s.best) == -1);
  }
}
