// Store-only formats in the generated code: their kernels store each row of y (`=`), say so in
// the header, and neither kernel.h nor the launch plan zeroes y; adding formats keep `+=` or
// atomicAdd and the zeroing, unless one part writes every row: it then stores first. Both kinds
// compile under NVRTC for sm_90 and, as a user's kernel.cu, with nvcc.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../graph/graph_test_util.hpp"
#include "codegen/emit.hpp"
#include "codegen/fusion.hpp"
#include "codegen/launch_plan.hpp"
#include "codegen_test_util.hpp"
#include "core/reference.hpp"
#include "graph/interpreter.hpp"
#include "runtime/nvrtc.hpp"
#include "test_support.hpp"

using namespace sparsetune;

namespace {

using Triples = std::vector<std::tuple<std::int64_t, std::int64_t, double>>;

graph::Graph known(const std::string& name) {
  for (const auto& g : test::known_graphs())
    if (g.name == name) return g;
  FAIL("no known graph " << name);
  return {};
}

graph::Graph parse(const char* ops) {
  return graph::graph_from_json(nlohmann::json::parse(std::string(R"({"ops":)") + ops + "}"));
}

// 60 x 40 with 1 to 4 entries in every row but `empty`.
Csr64 matrix(std::int64_t empty = -1) {
  Triples t;
  for (std::int64_t r = 0; r < 60; ++r)
    for (std::int64_t k = 0; r != empty && k < 1 + r % 4; ++k)
      t.emplace_back(r, (r * 5 + k * 13) % 40, 0.5 * static_cast<double>((r + k) % 7) - 1.75);
  return test::from_triples(60, 40, t);
}

// How each kernel's results reach y, read off the generated text: "=", "+=" or "atomicAdd".
std::vector<std::string> sinks(const std::string& src) {
  std::vector<std::string> out;
  const std::string store = "y[A_origin_row(";
  for (auto at = src.find(store); at != std::string::npos; at = src.find(store, at + 1)) {
    if (at > 0 && src[at - 1] == '&') {
      // The store fragment takes the row's address first: "y_row = &y[...]; *y_row = ...".
      const auto assign = src.find("*y_row = ", at);
      if (at >= 9 && src.compare(at - 9, 8, "y_row = ") == 0 && assign != std::string::npos)
        out.push_back("=");
      continue;  // else inside atomicAdd(&y[...], v), counted below
    }
    const auto close = src.find(")]", at);
    REQUIRE(close != std::string::npos);
    const auto op = src.substr(close + 2, 4);
    out.push_back(op == " += " ? "+=" : "?");
  }
  for (auto at = src.find("atomicAdd(&y["); at != std::string::npos;
       at = src.find("atomicAdd(&y[", at + 1))
    out.push_back("atomicAdd");
  return out;
}

void require_store_only(const codegen::Emitted& e, const Csr64& a) {
  REQUIRE(e.format.store_only);
  const auto s = sinks(e.kernels.source);
  REQUIRE_FALSE(s.empty());
  for (const auto& k : s) REQUIRE(k == "=");
  REQUIRE(e.kernels.source.find("// Store-only: every row of y is written exactly once") !=
          std::string::npos);
  REQUIRE(e.kernels.source.find("after y is zeroed") == std::string::npos);
  REQUIRE(e.host_header.find("cudaMemsetAsync") == std::string::npos);
  const auto plan = codegen::make_launch_plan(e.format, e.kernels);
  REQUIRE_FALSE(plan.zero_output);
  const auto in = codegen::spmv_plan_inputs(e.format, codegen::plan_x(a.cols, "f64"));
  REQUIRE(relative_l2_error(in.y_ref, spmv_reference(a, in.x)) <= 1e-12);
  const auto meta = nlohmann::json::parse(
      codegen::plan_file(plan, {}, in.max_len).metadata.at("sparsetune-plan"));
  REQUIRE(meta.at("output").at("zero") == false);
}

void require_adding(const codegen::Emitted& e) {
  REQUIRE_FALSE(e.format.store_only);
  const auto s = sinks(e.kernels.source);
  REQUIRE_FALSE(s.empty());
  for (const auto& k : s) REQUIRE((k == "+=" || k == "atomicAdd"));
  REQUIRE(e.kernels.source.find("// Adding: sparsetune_spmv_scale_y first sets y = beta y") !=
          std::string::npos);
  REQUIRE(e.kernels.source.find("void __launch_bounds__(256)\nsparsetune_spmv_scale_y(") !=
          std::string::npos);
  REQUIRE(e.host_header.find("cudaMemsetAsync(y, 0, sizeof(result_t) * kRows, stream)") !=
          std::string::npos);
  REQUIRE(e.host_header.find("sparsetune_spmv_scale_y<<<") != std::string::npos);
  const auto plan = codegen::make_launch_plan(e.format, e.kernels);
  REQUIRE(plan.zero_output);
  const auto meta =
      nlohmann::json::parse(codegen::plan_file(plan, {}, 1).metadata.at("sparsetune-plan"));
  REQUIRE(meta.at("output").at("zero") == true);
}

constexpr const char* kFourRowsPerThread =
    R"([{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK","rows":4},{"op":"THREAD_BITMAP_RED"}])";
constexpr const char* kRowBands = R"([{"op":"ROW_DIV","bounds":[25],"branches":[
    [{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}],
    [{"op":"COMPRESS"},{"op":"BMW_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"},{"op":"WARP_TOTAL_RED"}]]}])";

// Two column bands, each a thread per row over every row (a part covers every row).
constexpr const char* kColBands = R"([{"op":"COL_DIV","count":2,"branches":[
    [{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}],
    [{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK"},{"op":"THREAD_TOTAL_RED"}]]}])";
// The same bands with four-row threads, whose row steps skip an empty row.
constexpr const char* kColBandsGaps = R"([{"op":"COL_DIV","count":2,"branches":[
    [{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK","rows":4},{"op":"THREAD_BITMAP_RED"}],
    [{"op":"COMPRESS"},{"op":"BMT_ROW_BLOCK","rows":4},{"op":"THREAD_BITMAP_RED"}]]}])";

}  // namespace

TEST_CASE("store-only formats store into y and are not zeroed", "[codegen][store]") {
  const Csr64 a = matrix();
  for (const char* name :
       {"csr-scalar", "ell", "csr-vector", "sell-c-sigma", "row-grouped-csr", "csr-adaptive"}) {
    INFO(name);
    require_store_only(codegen::generate(known(name), a), a);
  }
  // Two row bands: two parts with work, fused into one launch (codegen/fusion.hpp).
  const auto bands = codegen::generate(parse(kRowBands), a);
  REQUIRE(bands.format.parts.size() == 2);
  REQUIRE(bands.kernels.kernels == std::vector<std::string>{codegen::kFusedKernel});
  require_store_only(bands, a);
  require_store_only(codegen::generate(parse(kFourRowsPerThread), a), a);
}

TEST_CASE("adding formats keep += or atomics and zero y", "[codegen][store]") {
  // A row no unit writes (the row steps of four-row threads skip the empty row 10).
  require_adding(codegen::generate(parse(kFourRowsPerThread), matrix(10)));
  // Atomics.
  for (const char* name : {"segmented-coo", "merge-path-like"}) {
    INFO(name);
    require_adding(codegen::generate(known(name), matrix()));
  }
  // Parts sharing rows where none writes every row: row steps skipping the empty row 10.
  require_adding(codegen::generate(parse(kColBandsGaps), matrix(10)));
}

TEST_CASE("a part writing every row stores first and the others add after it", "[codegen][store]") {
  const Csr64 a = matrix();
  struct Case {
    std::string name;
    codegen::Emitted e;
    int storing;  // by hand: the part that walks every row once
  };
  // COL_DIV's first band and the crux's cold part walk every row one unit each; hyb's ELL part
  // has a unit per row, its COO part atomics.
  std::vector<Case> cases;
  cases.push_back({"column bands", codegen::generate(parse(kColBands), a), 0});
  cases.push_back({"crux-tc", codegen::generate(known("crux-tc"), a), 1});
  cases.push_back({"hyb", codegen::generate(known("hyb"), a), 0});
  for (auto& c : cases) {
    INFO(c.name);
    const auto& f = c.e.format;
    REQUIRE_FALSE(f.store_only);
    REQUIRE(f.storing_part == c.storing);
    REQUIRE_FALSE(f.scales_output_first());
    const auto w = graph::count_writes(f, static_cast<std::size_t>(c.storing));
    REQUIRE(std::all_of(w.begin(), w.end(), [](std::int64_t k) { return k == 1; }));
    // One storing sink, the rest add.
    const auto s = sinks(c.e.kernels.source);
    CHECK(std::count(s.begin(), s.end(), "=") == 1);
    std::size_t stores = 0;  // the parts' chains in the source say how each reaches y
    for (auto at = c.e.kernels.source.find(" > store"); at != std::string::npos;
         at = c.e.kernels.source.find(" > store", at + 1))
      ++stores;
    CHECK(stores == 1);
    CHECK(c.e.kernels.source.find("// Storing first: part " + std::to_string(c.storing)) !=
          std::string::npos);
    CHECK(c.e.kernels.source.find("sparsetune_spmv_scale_y(") == std::string::npos);
    // kernel.h: no zeroing, the storing part's kernel launched first.
    const auto& h = c.e.host_header;
    CHECK(h.find("cudaMemsetAsync") == std::string::npos);
    const std::string storing = f.parts[static_cast<std::size_t>(c.storing)].kernel + "<<<";
    for (std::size_t i = 0; i < f.parts.size(); ++i)
      if (static_cast<int>(i) != c.storing && f.parts[i].n_bmtb > 0)
        CHECK(h.find(storing) < h.find(f.parts[i].kernel + "<<<"));
    // The plan: neither zeroing nor a beta pass, with beta = 0 or not; the storing part first.
    for (const double beta : {0.0, -0.75}) {
      const auto plan = codegen::make_launch_plan(f, c.e.kernels, "g", {1.5, beta});
      CHECK_FALSE(plan.zero_output);
      REQUIRE(plan.launches.size() == c.e.kernels.kernels.size());
      CHECK(plan.launches.front().kernel == f.parts[static_cast<std::size_t>(c.storing)].kernel);
    }
    // The interpreter against alpha A x + beta y in fp64.
    std::vector<double> x(a.cols), y0(a.rows);
    for (std::int64_t i = 0; i < a.cols; ++i) x[i] = 0.25 * static_cast<double>(i % 9) - 1.0;
    for (std::int64_t i = 0; i < a.rows; ++i) y0[i] = 3.0 - 0.5 * static_cast<double>(i % 5);
    const auto ax = spmv_reference(a, x);
    std::vector<double> y = y0, want(a.rows);
    for (std::int64_t i = 0; i < a.rows; ++i) want[i] = 1.5 * ax[i] - 0.75 * y0[i];
    graph::interpret(f, x, 1.5, -0.75, y);
    CHECK(relative_l2_error(y, want) <= 1e-14);
    CHECK(relative_l2_error(graph::interpret(f, x), ax) <= 1e-14);
    // The format binary keeps the storing part.
    const auto back = graph::from_safetensors(graph::to_safetensors(f, "test"), "round trip");
    CHECK(back.storing_part == c.storing);
  }
}

TEST_CASE("a format binary naming a storing part that misses rows is refused", "[codegen][store]") {
  const auto e = codegen::generate(parse(kColBands), matrix());
  REQUIRE(e.format.storing_part == 0);
  auto file = graph::to_safetensors(e.format, "test");
  file.metadata["storing_part"] = "7";
  REQUIRE_THROWS_WITH(graph::from_safetensors(file, "f.bin"),
                      Catch::Contains("f.bin") && Catch::Contains("storing_part must be"));
  // Four-row threads skip the empty row 10: no band writes it, so none may store first.
  const auto gaps = codegen::generate(parse(kColBandsGaps), matrix(10));
  REQUIRE(gaps.format.storing_part == -1);
  auto claimed = graph::to_safetensors(gaps.format, "test");
  claimed.metadata["storing_part"] = "0";
  REQUIRE_THROWS_WITH(graph::from_safetensors(claimed, "f.bin"),
                      Catch::Contains("does not write every row of y exactly once"));
  // hyb's COO part adds by atomics.
  const auto hyb = codegen::generate(known("hyb"), matrix());
  REQUIRE(hyb.format.parts.size() == 2);
  claimed = graph::to_safetensors(hyb.format, "test");
  claimed.metadata["storing_part"] = std::to_string(1 - hyb.format.storing_part);
  REQUIRE_THROWS_WITH(graph::from_safetensors(claimed, "f.bin"),
                      Catch::Contains("does not write every row of y exactly once"));
  file = graph::to_safetensors(e.format, "test");
  file.metadata["store_only"] = "true";
  REQUIRE_THROWS_WITH(graph::from_safetensors(file, "f.bin"),
                      Catch::Contains("storing_part is set, but so is store_only"));
}

TEST_CASE("store-only and adding kernels compile under NVRTC for sm_90", "[codegen][store]") {
  std::vector<runtime::CompileJob> jobs;
  const Csr64 full = matrix(), gaps = matrix(10);
  for (const char* dtype : {"f64", "f32", "f16"}) {
    codegen::EmitOptions o;
    o.design.dtype = dtype;
    for (const char* name : {"csr-scalar", "csr-vector", "sell-c-sigma", "csr-adaptive"})
      jobs.push_back({std::string(name) + "-" + dtype,
                      codegen::generate(known(name), full, o).kernels.source});
    jobs.push_back({std::string("bands-") + dtype,
                    codegen::generate(parse(kRowBands), full, o).kernels.source});
    jobs.push_back({std::string("gaps-") + dtype,
                    codegen::generate(parse(kFourRowsPerThread), gaps, o).kernels.source});
    jobs.push_back({std::string("storing-first-") + dtype,
                    codegen::generate(parse(kColBands), full, o).kernels.source});
    jobs.push_back(
        {std::string("hyb-") + dtype, codegen::generate(known("hyb"), full, o).kernels.source});
  }
  test::require_all_compile(jobs);
}
