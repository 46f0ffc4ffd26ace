// THREAD_TOTAL_RED(loads) and THREAD_BITMAP_RED(loads): a thread loads a batch of its entries
// before it sums them. The rules that keep it to SpMV and SpTV, the kernel text it selects, the
// format binary's field (absent at the default, checked when read), and y unchanged on the CPU.
#include <catch2/catch.hpp>

#include "../graph/graph_test_util.hpp"
#include "codegen/emit.hpp"
#include "codegen_test_util.hpp"
#include "core/reference.hpp"
#include "format_file_edit.hpp"
#include "graph/interpreter.hpp"
#include "graph/sptv_graph.hpp"

using namespace sparsetune;
using namespace sparsetune::graph;
using test::rule_broken;

namespace {

// `name` with its thread reduction given `loads` (0: the default, left out).
Graph with_loads(const std::string& name, int loads) {
  Graph g = test::known_graph(name);
  for (auto& n : g.ops)
    if (n.op == "THREAD_TOTAL_RED" || n.op == "THREAD_BITMAP_RED") {
      if (loads > 0)
        n.params["loads"] = loads;
      else
        n.params.erase("loads");
    }
  g.name = name + "-loads" + std::to_string(loads);
  validate(g, g.name);
  return g;
}

}  // namespace

TEST_CASE("loads is a thread reduction's parameter for SpMV and SpTV only", "[codegen]") {
  auto ops = [](const char* red, nlohmann::json loads, bool spmm) {
    nlohmann::json v =
        nlohmann::json::array({{{"op", "COMPRESS"}}, {{"op", "BMT_NNZ_BLOCK"}, {"nnz", 4}}});
    if (spmm) v.push_back({{"op", "COL_TILE"}, {"tn", 4}});
    nlohmann::json r = {{"op", red}};
    if (!loads.is_null()) r["loads"] = loads;
    v.push_back(r);
    v.push_back({{"op", "GMEM_ATOM_RED"}});
    return v;
  };
  for (const char* red : {"THREAD_TOTAL_RED", "THREAD_BITMAP_RED"}) {
    INFO(red);
    // THREAD_TOTAL_RED needs one row a thread, a data rule; the graph itself is valid.
    CHECK(rule_broken(ops(red, 4, false)) == "");
    CHECK(rule_broken(ops(red, 8, false), "sptv") == "");
    CHECK(rule_broken(ops(red, 1, true), "spmm") == "");
    CHECK(rule_broken(ops(red, nullptr, true), "spmm") == "");
    CHECK_THAT(rule_broken(ops(red, 2, true), "spmm"),
               Catch::Contains("loads > 1 serves SpMV and SpTV"));
    CHECK_THAT(rule_broken(ops(red, 0, false)), Catch::Contains("'loads'"));
    CHECK_THAT(rule_broken(ops(red, 9, false)), Catch::Contains("'loads'"));
  }
}

TEST_CASE("loads selects the batched fragment and keeps every stored array", "[codegen]") {
  const Csr64 a = test::random_matrix(21, 300, 200, 0.04, 0.2);
  for (const char* name : {"ell", "csr-scalar", "segmented-coo", "column-sorted-blocks"}) {
    INFO(name);
    const auto one = codegen::generate(with_loads(name, 0), a);
    for (int loads : {2, 3, 8}) {
      INFO("loads " << loads);
      const auto e = codegen::generate(with_loads(name, loads), a);
      const auto& s = e.kernels.source;
      CHECK(s.find(std::to_string(loads) + " entries at a time") != std::string::npos);
      CHECK(s.find("k0 += " + std::to_string(loads)) != std::string::npos);
      CHECK(s.find("$LOADS") == std::string::npos);
      REQUIRE(e.format.parts.size() == one.format.parts.size());
      for (std::size_t i = 0; i < e.format.parts.size(); ++i) {
        CHECK(e.format.parts[i].thread_loads == loads);
        // The same design: loads changes the kernel, not the format's arrays.
        CHECK(e.format.parts[i].arrays.size() == one.format.parts[i].arrays.size());
        CHECK(e.format.parts[i].nnz_stored == one.format.parts[i].nnz_stored);
      }
    }
    CHECK(one.kernels.source.find("entries at a time") == std::string::npos);
    CHECK(one.format.parts.at(0).thread_loads == 1);
  }
}

TEST_CASE("batched loads give y bit for bit on the edge matrices", "[codegen]") {
  for (const auto& [mname, a] : test::edge_matrices()) {
    const auto x = test::test_x(a.cols);
    const auto ref = spmv_reference(a, x);
    for (const char* name : {"ell", "csr-scalar", "segmented-coo", "column-sorted-blocks"}) {
      Format f1;
      try {
        f1 = design(with_loads(name, 0), a);
      } catch (const DesignError&) {
        continue;  // a data rule of this matrix (one row a thread)
      }
      INFO(name << " on " << mname);
      const auto y1 = interpret(f1, x);
      REQUIRE(test::max_abs_diff(y1, ref) <= 1e-12 * (1.0 + a.nnz()));
      for (int loads : {2, 5}) CHECK(interpret(design(with_loads(name, loads), a), x) == y1);
    }
  }
}

TEST_CASE("the format binary keeps loads, leaves the default out and refuses a bad value",
          "[codegen]") {
  const Csr64 a = test::random_matrix(5, 120, 90, 0.05, 0.2);
  const auto plain = codegen::generate(with_loads("segmented-coo", 0), a).format;
  const auto batched = codegen::generate(with_loads("segmented-coo", 4), a).format;
  const std::string plain_bytes = io::serialize_safetensors(to_safetensors(plain, "t"));
  const std::string bytes = io::serialize_safetensors(to_safetensors(batched, "t"));
  // The default writes no field: binaries written before it read and hash as they did.
  CHECK(plain_bytes.find("thread_loads") == std::string::npos);
  CHECK(bytes.find("thread_loads") != std::string::npos);
  const auto back = from_safetensors(io::parse_safetensors(bytes, "f"), "f");
  CHECK(back.parts.at(0).thread_loads == 4);
  CHECK(from_safetensors(io::parse_safetensors(plain_bytes, "f"), "f").parts.at(0).thread_loads ==
        1);
  for (int bad : {0, 9, -3}) {
    const auto edited =
        test::with_parts(bytes, [&](nlohmann::json& p) { p[0]["thread_loads"] = bad; });
    CHECK_THAT(test::format_load_error(edited),
               Catch::Contains("part 0") && Catch::Contains("thread_loads must be 1 to 8"));
  }
}

TEST_CASE("SpTV's column-sorted COO loads a thread's four entries together", "[codegen]") {
  int seen = 0;
  for (const auto& n : slice_format_ops(SliceFormat::COO, 0, 1, 8192))
    if (n.op == "THREAD_BITMAP_RED") {
      CHECK(n.params.at("loads") == 4);
      ++seen;
    }
  CHECK(seen == 1);
  // The atomic COO is unchanged (its threads' entries are not one batch of a fixed size).
  for (const auto& n : slice_format_ops(SliceFormat::COO, 0, 1, 0))
    CHECK_FALSE(n.params.contains("loads"));
}
