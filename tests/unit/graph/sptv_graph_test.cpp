// SpTV in the IR: a tensor's matrix view, SLICE_DIV into one part per slice format, each part
// designed by the SpMV sub-graph of its format and checked by the CPU interpreter against the
// fp64 SpTV reference and hand-computed values.
#include "graph/sptv_graph.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <random>

#include "core/reference.hpp"
#include "core/sptv_matrix.hpp"
#include "graph/interpreter.hpp"
#include "graph/slice_assignment.hpp"
#include "io/tns.hpp"

using namespace sparsetune;
using namespace sparsetune::graph;

namespace {

SparseTensor make_tensor(std::vector<std::int64_t> dims,
                         const std::vector<std::pair<std::vector<std::int64_t>, double>>& e) {
  SparseTensor t;
  t.dims = std::move(dims);
  t.idx.resize(t.dims.size());
  for (const auto& [c, v] : e) {
    for (std::size_t m = 0; m < c.size(); ++m) t.idx[m].push_back(c[m]);
    t.val.push_back(v);
  }
  return t;
}

// The paper's example (§2.2): X in R^{3x4x2} with the frontal slices of eq. (2); the one zero of
// X_{:,:,2} is not stored.
SparseTensor paper_tensor() {
  std::vector<std::pair<std::vector<std::int64_t>, double>> e;
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 4; ++j)
      for (std::int64_t k = 0; k < 2; ++k) {
        const double v = 1 + 2 * i + 6 * j - k;
        if (v != 0) e.push_back({{i, j, k}, v});
      }
  return make_tensor({3, 4, 2}, e);
}

std::vector<double> test_v(std::int64_t n) {
  std::vector<double> v(n);
  for (std::int64_t i = 0; i < n; ++i) v[i] = 0.5 + 0.25 * static_cast<double>((i * 37) % 11);
  return v;
}

// Y = X ×_mode v through the IR, in the view's order (slice by slice).
std::vector<double> ir_sptv(const SparseTensor& t, int mode, const std::vector<double>& v,
                            const std::vector<SliceFormat>& formats, int slice_mode = -1,
                            int hyb_width = 2, int coo_block_nnz = 0) {
  const auto m = sptv_matrix(t, mode, slice_mode);
  const auto g = sptv_graph(formats, slice_stats(m), hyb_width, coo_block_nnz);
  Format f = design(g, m.a, sptv_design_options(m, "f64"));
  f.sptv = sptv_slices(m, formats);
  return interpret(f, v);
}

std::vector<SliceFormat> uniform(std::int64_t n, SliceFormat f) { return {std::size_t(n), f}; }

std::vector<SliceFormat> mixed(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<SliceFormat> f(n);
  for (auto& x : f) x = static_cast<SliceFormat>(rng() % kSliceFormats);
  return f;
}

void check_all_formats(const SparseTensor& t, int mode, int slice_mode = -1) {
  const auto v = test_v(t.dims[mode]);
  const auto m = sptv_matrix(t, mode, slice_mode);
  const auto ref = sptv_reference_in_view_order(t, m, v).val;
  for (int f = 0; f < kSliceFormats; ++f) {
    INFO("format " << slice_format_name(static_cast<SliceFormat>(f)));
    const auto y = ir_sptv(t, mode, v, uniform(m.slices, static_cast<SliceFormat>(f)), slice_mode);
    REQUIRE(relative_l2_error(y, ref) < 1e-12);
  }
  // COO in column-sorted thread blocks: the size chosen per part, and 3 entries a block (many
  // blocks, a long fiber alone in its block, rows of one block spread over several threads).
  for (int block_nnz : {kSortedCooAuto, 3}) {
    INFO("COO in column-sorted blocks of " << block_nnz << " entries");
    const auto y =
        ir_sptv(t, mode, v, uniform(m.slices, SliceFormat::COO), slice_mode, 2, block_nnz);
    REQUIRE(relative_l2_error(y, ref) < 1e-12);
  }
  // HYB at H = 1: its ELL part one entry a fiber, 4 fibers a thread (the other widths above).
  for (int width : {1, 3}) {
    INFO("HYB of width " << width);
    REQUIRE(relative_l2_error(
                ir_sptv(t, mode, v, uniform(m.slices, SliceFormat::HYB), slice_mode, width), ref) <
            1e-12);
    REQUIRE(relative_l2_error(ir_sptv(t, mode, v, mixed(m.slices, 4), slice_mode, width), ref) <
            1e-12);
  }
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    INFO("mixed formats, seed " << seed);
    REQUIRE(relative_l2_error(ir_sptv(t, mode, v, mixed(m.slices, seed), slice_mode), ref) < 1e-12);
    INFO("COO slices in column-sorted blocks");
    REQUIRE(relative_l2_error(
                ir_sptv(t, mode, v, mixed(m.slices, seed), slice_mode, 2, kSortedCooAuto), ref) <
            1e-12);
  }
}

}  // namespace

TEST_CASE("SpTV through the IR gives the paper's hand-computed example", "[graph][sptv]") {
  const auto t = paper_tensor();
  const std::vector<double> v = {1, 2, 3, 4};
  // Y = X ×_2 v = [130 120; 150 140; 170 160] (rows i, columns k). Sliced along i its entries
  // come ordered by (i, k); sliced along k, slice by slice: by (k, i).
  const std::vector<double> by_i = {130, 120, 150, 140, 170, 160};
  const std::vector<double> by_k = {130, 150, 170, 120, 140, 160};
  for (int f = 0; f < kSliceFormats; ++f)
    for (int slice_mode : {0, 2}) {
      INFO(slice_format_name(static_cast<SliceFormat>(f)) << ", sliced along mode " << slice_mode);
      const auto m = sptv_matrix(t, 1, slice_mode);
      const auto y = ir_sptv(t, 1, v, uniform(m.slices, static_cast<SliceFormat>(f)), slice_mode);
      REQUIRE(y == (slice_mode == 0 ? by_i : by_k));
      REQUIRE(sptv_reference_in_view_order(t, m, v).val == y);
    }
  SECTION("the default slice mode is the smallest other mode") {
    CHECK(default_slice_mode(t, 1) == 2);
    CHECK(default_slice_mode(t, 2) == 0);
    CHECK(default_slice_mode(t, 0) == 2);
  }
}

TEST_CASE("SpTV matrix view: rows are fibers, grouped by slice", "[graph][sptv]") {
  const auto t = paper_tensor();
  const auto m = sptv_matrix(t, 1);  // sliced along mode 2 (size 2)
  CHECK(m.a.rows == 6);
  CHECK(m.a.cols == 4);
  CHECK(m.slices == 2);
  // Slice by slice: fibers (i, k) ordered by k, then i, so each slice's rows are consecutive.
  CHECK(sptv_output_order(3, 1, 2) == std::vector<int>{2, 0});
  CHECK(m.row_slice == std::vector<std::int64_t>{0, 0, 0, 1, 1, 1});
  // Sliced along mode 0, the first remaining mode, the order is the reference's (i, k).
  CHECK(sptv_output_order(3, 1, 0) == std::vector<int>{0, 2});
  CHECK(sptv_matrix(t, 1, 0).row_slice == std::vector<std::int64_t>{0, 0, 1, 1, 2, 2});
  const auto table = slice_table(m);
  CHECK(table.index == std::vector<std::int64_t>{0, 1});
  CHECK(table.nnz == std::vector<std::int64_t>{0, 12, 23});
}

TEST_CASE("SLICE_DIV puts each slice whole into its format's part", "[graph][sptv]") {
  const auto t = paper_tensor();
  const auto m = sptv_matrix(t, 1, 0);  // three slices along mode 0, two fibers each
  const std::vector<SliceFormat> f = {SliceFormat::ELL, SliceFormat::CSR, SliceFormat::ELL};
  const auto g = sptv_graph(f, slice_stats(m));
  const auto set = apply_graph(g, m.a, 16.0, sptv_design_options(m, "f64").slices);
  REQUIRE(set.parts.size() == 2);                                           // CSR, then ELL
  CHECK(set.parts[0].origin_row == std::vector<std::int64_t>{2, 3});        // slice 1
  CHECK(set.parts[1].origin_row == std::vector<std::int64_t>{0, 1, 4, 5});  // slices 0 and 2
}

TEST_CASE("SLICE_DIV's assignment: pairs where shorter, one entry a slice otherwise",
          "[graph][sptv]") {
  // Runs where they are shorter, as pairs (part, slices); the flat list where they are not.
  nlohmann::json p = {{"count", 3}};
  set_slice_assignment(p, {0, 0, 0, 0, 2, 2, 0, 0, 0});
  CHECK_FALSE(p.contains("assign"));
  CHECK(p.at("assign_runs") == nlohmann::json{0, 4, 2, 2, 0, 3});
  CHECK(slice_assignment(p, 9) == std::vector<std::int64_t>{0, 0, 0, 0, 2, 2, 0, 0, 0});
  set_slice_assignment(p, {0, 1, 0, 2});
  CHECK_FALSE(p.contains("assign_runs"));
  CHECK(p.at("assign") == nlohmann::json{0, 1, 0, 2});
  CHECK(slice_assignment(p, 4) == std::vector<std::int64_t>{0, 1, 0, 2});
  CHECK(slice_assignment_rule(p, 3).empty());
  // A slice count other than the tensor's is refused before the list is expanded.
  CHECK_THROWS_WITH(slice_assignment({{"assign_runs", {0, 4000000000000000000}}}, 9),
                    Catch::Contains("covers 4000000000000000000 slices, the tensor has 9"));
  CHECK_THROWS_AS(slice_assignment({{"assign_runs", {0, 4000000000000000000}}}), DesignError);
  // The rules: one form, parts below the count, pairs of runs that hold slices.
  CHECK(slice_assignment_rule({{"assign_runs", {0, 2, 1}}}, 2).find("odd length") !=
        std::string::npos);
  CHECK(slice_assignment_rule({{"assign_runs", {0, 0}}}, 2).find("holds no slice") !=
        std::string::npos);
  CHECK(slice_assignment_rule({{"assign_runs", {5, 1}}}, 2).find("names part 5 of 2") !=
        std::string::npos);
  // A tensor of 10,000 slices, two of them non-empty: a few pairs, and the same design.
  const auto t = make_tensor({10000, 6, 7}, {{{3, 1, 2}, 1.5}, {{9000, 5, 6}, -3.0}});
  const auto m = sptv_matrix(t, 1, 0);
  REQUIRE(m.slices == 10000);
  std::vector<SliceFormat> f(10000, SliceFormat::CSR);
  f[9000] = SliceFormat::ELL;
  const auto g = sptv_graph(f, slice_stats(m));
  const auto& div = g.ops.at(0).params;
  CHECK(div.at("assign_runs").size() == 6);
  const auto v = test_v(6);
  const Format fmt = design(g, m.a, sptv_design_options(m, "f64"));
  CHECK(relative_l2_error(interpret(fmt, v), sptv_reference_in_view_order(t, m, v).val) < 1e-12);
  // Both forms at once are refused by the graph's validation.
  auto both = g;
  both.ops.at(0).params["assign"] = std::vector<std::int64_t>(10000, 0);
  CHECK_THROWS_WITH(validate(both, "both.json"), Catch::Contains("not both"));
}

TEST_CASE("SpTV through the IR matches the fp64 reference on every mode and format",
          "[graph][sptv]") {
  const auto t = io::read_tns(std::string(SPARSETUNE_TEST_DATA_DIR) + "/order3.tns");
  for (int mode = 0; mode < 3; ++mode)
    for (int s = 0; s < 3; ++s) {
      if (s == mode) continue;
      INFO("mode " << mode << ", slices along " << s);
      check_all_formats(t, mode, s);
    }
  // A random order-3 tensor with skewed slices: long fibers, one-entry slices, empty slices.
  std::mt19937_64 rng(5);
  std::vector<std::pair<std::vector<std::int64_t>, double>> e;
  for (int n = 0; n < 900; ++n) {
    const std::int64_t i = rng() % 3 == 0 ? 0 : rng() % 9;  // slice 0 holds a third of all
    const std::int64_t j = n < 40 ? 1 : rng() % 40;         // fiber j = 1 is long
    e.push_back({{i, j, static_cast<std::int64_t>(rng() % 30)}, (rng() % 200) / 50.0 - 2.0});
  }
  e.push_back({{11, 3, 7}, 2.5});  // a one-entry slice; slices 9, 10 and 12 stay empty
  const auto r = make_tensor({13, 40, 30}, e);
  for (int mode = 0; mode < 3; ++mode) {
    INFO("random tensor, mode " << mode);
    check_all_formats(r, mode);
    check_all_formats(r, mode, mode == 0 ? 1 : 0);
  }
}

TEST_CASE("SpTV edge cases: empty slices, one-entry slices, modes of size 1", "[graph][sptv]") {
  SECTION("a mode of size 1") {
    const auto t = make_tensor({4, 1, 3}, {{{0, 0, 0}, 2.0}, {{3, 0, 2}, -1.0}, {{3, 0, 0}, 4.0}});
    for (int mode = 0; mode < 3; ++mode) {
      INFO("mode " << mode);
      check_all_formats(t, mode);
    }
  }
  SECTION("only one-entry slices, most slices empty") {
    const auto t = make_tensor({50, 6, 7}, {{{3, 1, 2}, 1.5}, {{40, 5, 6}, -3.0}});
    for (int mode = 0; mode < 3; ++mode) check_all_formats(t, mode, mode == 0 ? 1 : 0);
  }
  SECTION("no entries at all") {
    const auto t = make_tensor({3, 4, 5}, {});
    const auto y = ir_sptv(t, 1, test_v(4), uniform(3, SliceFormat::HYB), 0);
    CHECK(y.empty());
  }
}

TEST_CASE("SpTV of an order-4 tensor slices one mode and unfolds the others", "[graph][sptv]") {
  std::mt19937_64 rng(17);
  std::vector<std::pair<std::vector<std::int64_t>, double>> e;
  for (int n = 0; n < 300; ++n)
    e.push_back({{static_cast<std::int64_t>(rng() % 5), static_cast<std::int64_t>(rng() % 6),
                  static_cast<std::int64_t>(rng() % 4), static_cast<std::int64_t>(rng() % 7)},
                 (rng() % 100) / 25.0 - 2.0});
  const auto t = make_tensor({5, 6, 4, 7}, e);
  for (int mode = 0; mode < 4; ++mode) {
    INFO("mode " << mode);
    check_all_formats(t, mode);
  }
}

TEST_CASE("SpTV alpha and beta follow SpMV's contract", "[graph][sptv]") {
  const auto t = paper_tensor();
  const std::vector<double> v = {1, 2, 3, 4};
  const auto m = sptv_matrix(t, 1);
  for (auto fmt : {SliceFormat::CSR, SliceFormat::COO}) {  // a store-only and an adding format
    const auto formats = uniform(m.slices, fmt);
    Format f = design(sptv_graph(formats, slice_stats(m)), m.a, sptv_design_options(m, "f64"));
    std::vector<double> y = {1, 2, 3, 4, 5, 6};
    interpret(f, v, 2.0, -1.0, y);
    // Y slice by slice along k: 130, 150, 170, 120, 140, 160; y = 2 Y - y.
    CHECK(y == std::vector<double>{259, 298, 337, 236, 275, 314});
  }
}

TEST_CASE("SpTV formats keep HTF's slice table through the format binary", "[graph][sptv]") {
  const auto t = paper_tensor();
  const auto m = sptv_matrix(t, 1, 0);
  const std::vector<SliceFormat> formats = {SliceFormat::Dense, SliceFormat::HYB, SliceFormat::COO};
  Format f = design(sptv_graph(formats, slice_stats(m)), m.a, sptv_design_options(m, "f32"));
  f.sptv = sptv_slices(m, formats);
  const auto back = from_safetensors(to_safetensors(f, "test"), "mem");
  CHECK(back.op == "sptv");
  CHECK(back.sptv.dims == std::vector<std::int64_t>{3, 4, 2});
  CHECK(back.sptv.mode == 1);
  CHECK(back.sptv.slice_mode == 0);
  CHECK(back.sptv.slice_idx == std::vector<std::int64_t>{0, 1, 2});
  CHECK(back.sptv.slice_nnz == std::vector<std::int64_t>{0, 7, 15, 23});
  CHECK(back.sptv.slice_format == std::vector<std::int64_t>{4, 3, 1});
  CHECK(back.sptv.y_order == std::vector<int>{0, 2});
  SECTION("y's order: recorded, read as lexicographic when absent, refused when foreign") {
    const auto mk = sptv_matrix(t, 1, 2);  // sliced along k: y ordered by (k, i)
    const std::vector<SliceFormat> two = {SliceFormat::CSR, SliceFormat::COO};
    Format fk = design(sptv_graph(two, slice_stats(mk)), mk.a, sptv_design_options(mk, "f64"));
    fk.sptv = sptv_slices(mk, two);
    const auto with = [&](const std::string& order) {
      auto s = to_safetensors(fk, "test");
      auto j = nlohmann::json::parse(s.metadata.at("sptv"));
      if (order.empty())
        j.erase("y_order");
      else
        j["y_order"] = nlohmann::json::parse(order);
      s.metadata["sptv"] = j.dump();
      return s;
    };
    CHECK(from_safetensors(to_safetensors(fk, "test"), "new").sptv.y_order ==
          std::vector<int>{2, 0});
    CHECK(from_safetensors(with(""), "old").sptv.y_order == std::vector<int>{0, 2});
    CHECK(from_safetensors(with("[0, 2]"), "lexicographic").sptv.y_order == std::vector<int>{0, 2});
    REQUIRE_THROWS_WITH(from_safetensors(with("[2, 1]"), "bad.safetensors"),
                        Catch::Contains("bad.safetensors") && Catch::Contains("y_order"));
    REQUIRE_THROWS_WITH(from_safetensors(with("\"k\""), "bad.safetensors"),
                        Catch::Contains("y_order"));
  }
  SECTION("a corrupted table is refused naming the array") {
    auto s = to_safetensors(f, "test");
    for (auto& a : s.arrays)
      if (a.name == "htf.slice_format") a.bytes[0] = 9;
    REQUIRE_THROWS_WITH(from_safetensors(s, "bad.safetensors"),
                        Catch::Contains("htf.slice_format"));
  }
}

TEST_CASE("SLICE_DIV and DENSE_FILL serve SpTV graphs only", "[graph][sptv]") {
  Graph g = sptv_graph({SliceFormat::CSR, SliceFormat::Dense}, SliceStats{{1, 1}, {1, 1}, 4});
  g.op = "spmv";
  REQUIRE_THROWS_WITH(validate(g), Catch::Contains("serves op sptv only"));
  SECTION("without a tensor's slices the design is refused") {
    Graph s = sptv_graph({SliceFormat::CSR}, SliceStats{{1}, {1}, 1});
    Csr64 a;
    a.rows = 1;
    a.cols = 1;
    a.row_ptr = {0, 1};
    a.col_idx = {0};
    a.val = {1.0};
    REQUIRE_THROWS_WITH(design(s, a), Catch::Contains("not a tensor's view"));
  }
}

TEST_CASE("SpTV through the IR on the shared tensors", "[graph][sptv][shared]") {
  const std::string dir = std::string(SPARSETUNE_SHARED_DIR) + "/tensors";
  if (!std::filesystem::exists(dir + "/T2_d_LMOP.tns.gz")) {
    WARN("no shared tensors");
    return;
  }
  for (const char* name : {"T2_d_LMOP", "KG_JF17K_4"}) {
    const auto t = io::read_tns(dir + "/" + name + ".tns.gz");
    for (int mode = 0; mode < t.order(); ++mode) {
      INFO(name << ", mode " << mode);
      const auto v = test_v(t.dims[mode]);
      const auto m = sptv_matrix(t, mode);
      const auto ref = sptv_reference_in_view_order(t, m, v).val;
      auto formats = mixed(m.slices, 11);
      for (auto& f : formats)  // Dense only where it stays small
        if (f == SliceFormat::Dense) f = SliceFormat::CSR;
      REQUIRE(relative_l2_error(ir_sptv(t, mode, v, formats), ref) < 1e-12);
    }
  }
}

TEST_CASE("Alg. 1's stream batches: each format's slices in runs of about equal entries",
          "[graph][sptv]") {
  std::mt19937_64 rng(23);
  std::vector<std::pair<std::vector<std::int64_t>, double>> e;
  for (int n = 0; n < 2000; ++n)
    e.push_back({{static_cast<std::int64_t>(rng() % 40), static_cast<std::int64_t>(rng() % 30),
                  static_cast<std::int64_t>(rng() % 25)},
                 (rng() % 100) / 25.0 - 2.0});
  const auto t = make_tensor({40, 30, 25}, e);
  const auto m = sptv_matrix(t, 2, 0);
  const auto formats = mixed(m.slices, 4);
  const auto nnz = slice_entries(m);
  const auto v = test_v(25);
  const auto ref = sptv_reference_in_view_order(t, m, v).val;
  for (int batches : {1, 3, 8, 64}) {
    INFO(batches << " batches");
    const auto b = sptv_batched_graph(formats, slice_stats(m), 2, batches);
    int parts = 0;
    for (int f = 0; f < kSliceFormats; ++f) {
      int slices = 0;
      for (std::size_t s = 0; s < formats.size(); ++s)
        slices += static_cast<int>(formats[s]) == f && nnz[s] > 0;
      CHECK(static_cast<int>(b.branches[f].size()) == std::min(slices, batches));
      parts += static_cast<int>(b.branches[f].size());
    }
    CHECK(b.graph.ops[0].branches.size() == static_cast<std::size_t>(parts));
    const Format f = design(b.graph, m.a, sptv_design_options(m, "f64"));
    REQUIRE(relative_l2_error(interpret(f, v), ref) < 1e-12);
    // The same cuts with COO in column-sorted blocks, each batch's block size its own.
    const auto sorted = sptv_batched_graph(formats, slice_stats(m), 2, batches, kSortedCooAuto);
    bool has_sort = false;
    for (const auto& branch : sorted.graph.ops[0].branches)
      for (const auto& n : branch) has_sort = has_sort || n.op == "BMTB_COL_SORT";
    CHECK(has_sort);
    const Format fs = design(sorted.graph, m.a, sptv_design_options(m, "f64"));
    REQUIRE(relative_l2_error(interpret(fs, v), ref) < 1e-12);
  }
}

TEST_CASE("Alg. 1's stream batches go smallest first, then largest first", "[graph][sptv]") {
  // Slice s of 8 holds 2^(7-s) fibers of one entry: runs of whole slices cannot be equal, and
  // in slice order the largest would go first.
  std::vector<std::pair<std::vector<std::int64_t>, double>> e;
  for (std::int64_t s = 0; s < 8; ++s)
    for (std::int64_t j = 0; j < (std::int64_t{1} << (7 - s)); ++j)
      e.push_back({{s, j, (j * 5 + s) % 9}, 1.0 + s});
  const auto t = make_tensor({8, 128, 9}, e);
  const auto m = sptv_matrix(t, 2, 0);
  REQUIRE(m.slices == 8);
  const std::vector<SliceFormat> formats(8, SliceFormat::COO);
  const auto nnz = slice_entries(m);
  const auto b = sptv_batched_graph(formats, slice_stats(m), 2, 4);
  // Runs by entries in slice order (the share is 255 / 4): {0} 128, {1} 64, {2} 32, {3..7} 31.
  const auto assign = slice_assignment(b.graph.ops[0].params, 8);
  std::vector<std::int64_t> run_nnz(4, 0);
  for (std::size_t s = 0; s < 8; ++s) run_nnz.at(static_cast<std::size_t>(assign[s])) += nnz[s];
  REQUIRE(b.branches[static_cast<int>(SliceFormat::COO)] == std::vector<int>{0, 1, 2, 3});
  CHECK(run_nnz == std::vector<std::int64_t>{31, 128, 64, 32});
  // Each run still holds consecutive slices: slices 3-7 together, in part 0.
  for (std::size_t s = 3; s < 8; ++s) CHECK(assign[s] == 0);
  const auto v = test_v(9);
  const Format f = design(b.graph, m.a, sptv_design_options(m, "f64"));
  REQUIRE(relative_l2_error(interpret(f, v), sptv_reference_in_view_order(t, m, v).val) < 1e-12);
}

namespace {

// Slices of every shape the lanes must handle (sliced along mode 0, fibers along mode 2 of size
// 70): long fibers (> 32 entries, one of 70), a one-entry slice, an empty slice, fibers of one
// entry, fibers of exactly 33, and random short ones.
SparseTensor lanes_tensor() {
  std::mt19937_64 rng(31);
  std::vector<std::pair<std::vector<std::int64_t>, double>> e;
  const auto val = [&] { return (rng() % 200) / 50.0 - 2.0 + 0.001; };
  for (std::int64_t k = 0; k < 70; ++k) e.push_back({{0, 1, k}, val()});     // 70 entries
  for (std::int64_t k = 0; k < 45; k += 1) e.push_back({{0, 7, k}, val()});  // 45 entries
  for (int n = 0; n < 60; ++n)
    e.push_back(
        {{0, 2 + static_cast<std::int64_t>(rng() % 5), static_cast<std::int64_t>(rng() % 70)},
         val()});
  e.push_back({{1, 4, 9}, 3.5});                                                     // one entry
  for (std::int64_t j = 0; j < 50; ++j) e.push_back({{3, j, (j * 7) % 70}, val()});  // length 1
  for (std::int64_t j = 0; j < 5; ++j)
    for (std::int64_t k = 0; k < 33; ++k) e.push_back({{4, 3 * j, 2 * k}, val()});  // 33 each
  for (int n = 0; n < 300; ++n)
    e.push_back(
        {{5, static_cast<std::int64_t>(rng() % 50), static_cast<std::int64_t>(rng() % 70)}, val()});
  return make_tensor({6, 50, 70}, e);  // slice 2 stays empty
}

// One SLICE_DIV part holding every slice in format `fmt` with `lanes` threads per fiber.
Graph forced_lanes_graph(const SptvMatrix& m, SliceFormat fmt, int lanes, int hyb_width) {
  Graph g;
  g.name = "lanes";
  g.op = "sptv";
  OpNode div{"SLICE_DIV",
             {{"count", 1}, {"assign", std::vector<std::int64_t>(m.slices, 0)}},
             {slice_format_ops(fmt, hyb_width, lanes)}};
  g.ops.push_back(std::move(div));
  validate(g, "lanes test");
  return g;
}

std::vector<double> sptv_alpha_beta(const SparseTensor& t, const SptvMatrix& m,
                                    const std::vector<double>& v, double alpha, double beta,
                                    std::vector<double> y) {
  const auto ref = sptv_reference_in_view_order(t, m, v).val;
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = alpha * ref[i] + beta * y[i];
  return y;
}

}  // namespace

TEST_CASE("Lanes per fiber follow the mean fiber length in powers of two", "[graph][sptv]") {
  CHECK(slice_lanes(0.0) == 1);
  CHECK(slice_lanes(1.0) == 1);
  CHECK(slice_lanes(1.99) == 1);
  CHECK(slice_lanes(2.0) == 2);
  CHECK(slice_lanes(3.9) == 2);
  CHECK(slice_lanes(4.0) == 4);
  CHECK(slice_lanes(15.0) == 8);
  CHECK(slice_lanes(31.9) == 16);
  CHECK(slice_lanes(32.0) == 32);
  CHECK(slice_lanes(5000.0) == 32);
  CHECK(slice_lanes(std::nan("")) == 1);
  REQUIRE_THROWS_WITH(slice_format_ops(SliceFormat::CSR, 4, 3), Catch::Contains("power of two"));
  REQUIRE_THROWS_WITH(slice_format_ops(SliceFormat::CSR, 4, 64), Catch::Contains("power of two"));

  const auto m = sptv_matrix(lanes_tensor(), 2, 0);
  const auto s = slice_stats(m);
  CHECK(s.width == 70);
  CHECK(s.nnz[2] == 0);
  CHECK(s.fibers[1] == 1);
  CHECK(s.fibers[3] == 50);
  CHECK(part_lanes(SliceFormat::CSR, s, {3}, 4) == 1);   // fibers of one entry: a thread each
  CHECK(part_lanes(SliceFormat::CSR, s, {4}, 4) == 32);  // 33 entries: a warp
  CHECK(part_lanes(SliceFormat::ELL, s, {4}, 4) == 32);
  CHECK(part_lanes(SliceFormat::HYB, s, {4}, 4) == 4);     // the ELL part is 4 wide
  CHECK(part_lanes(SliceFormat::Dense, s, {1}, 4) == 32);  // a full row of 70
  CHECK(part_lanes(SliceFormat::COO, s, {4}, 4) == 1);
  CHECK(part_lanes(SliceFormat::CSR, s, {2}, 4) == 1);  // empty

  SECTION("sptv_graph gives each format's part the lanes of its own slices") {
    std::vector<SliceFormat> f(m.slices, SliceFormat::COO);
    f[3] = SliceFormat::CSR;  // short fibers
    f[4] = SliceFormat::ELL;  // 33 entries each
    const auto g = sptv_graph(f, s, 4);
    const auto& b = g.ops.at(0).branches;
    REQUIRE(b.size() == 3);  // CSR, COO, ELL
    CHECK(b[0].back().op == "THREAD_TOTAL_RED");
    CHECK(b[0].size() == 3);  // COMPRESS > BMT_ROW_BLOCK > THREAD_TOTAL_RED
    CHECK(b[2].back().op == "WARP_TOTAL_RED");
    CHECK(b[2][1].params.at("rows") == 1);
  }
}

TEST_CASE("Every slice format with every lane count matches the fp64 reference", "[graph][sptv]") {
  struct Case {
    std::string name;
    SparseTensor t;
    int mode, slice_mode;
  };
  std::vector<Case> cases = {
      {"skewed slices", lanes_tensor(), 2, 0},
      {"skewed slices, fibers along mode 1", lanes_tensor(), 1, 0},
      {"a mode of size 1 multiplied",
       make_tensor({4, 1, 3}, {{{0, 0, 0}, 2.0}, {{3, 0, 2}, -1.0}, {{3, 0, 0}, 4.0}}), 1, 0},
      {"a mode of size 1 sliced",
       make_tensor({4, 1, 3}, {{{0, 0, 0}, 2.0}, {{3, 0, 2}, -1.0}, {{3, 0, 0}, 4.0}}), 0, 1},
      {"one entry", make_tensor({3, 2, 5}, {{{2, 1, 4}, -1.25}}), 2, 0},
  };
  const int hyb_width = 4;
  for (const auto& c : cases)
    for (int f = 0; f < kSliceFormats; ++f)
      for (int lanes : {1, 2, 4, 8, 16, 32})
        for (const char* dtype : {"f64", "f32"}) {
          const auto fmt = static_cast<SliceFormat>(f);
          INFO(c.name << ": " << slice_format_name(fmt) << ", " << lanes << " lanes, " << dtype);
          const auto m = sptv_matrix(c.t, c.mode, c.slice_mode);
          const auto v = test_v(c.t.dims[c.mode]);
          Format d = design(forced_lanes_graph(m, fmt, lanes, hyb_width), m.a,
                            sptv_design_options(m, dtype));
          const double tol = std::string(dtype) == "f64" ? 1e-12 : 1e-5;
          const auto ref = sptv_reference_in_view_order(c.t, m, v).val;
          REQUIRE(relative_l2_error(interpret(d, v), ref) < tol);
          std::vector<double> y(ref.size());
          for (std::size_t i = 0; i < y.size(); ++i)
            y[i] = 1.0 - 0.125 * static_cast<double>(i % 9);
          const auto want = sptv_alpha_beta(c.t, m, v, 1.5, -0.75, y);
          interpret(d, v, 1.5, -0.75, y);
          REQUIRE(relative_l2_error(y, want) < tol);
          // One thread per fiber and lane; a fiber is written once: CSR, ELL and Dense store.
          if (fmt != SliceFormat::COO && fmt != SliceFormat::HYB) CHECK(d.store_only);
          if (lanes > 1 && lanes < 32 && fmt != SliceFormat::COO && m.a.rows > 0) {
            const auto& p = d.parts.at(0);
            CHECK(p.n_bmt == lanes * m.a.rows);  // HYB: its ELL part holds every fiber
            CHECK(p.reductions.back() == "WARP_BITMAP_RED");
          }
        }
}

TEST_CASE("Mixed slice formats with the lanes sptv_graph chooses match the reference",
          "[graph][sptv]") {
  const auto t = lanes_tensor();
  for (int mode : {1, 2}) {
    const auto m = sptv_matrix(t, mode, 0);
    const auto v = test_v(t.dims[mode]);
    const auto ref = sptv_reference_in_view_order(t, m, v).val;
    for (std::uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
      INFO("mode " << mode << ", seed " << seed);
      const auto formats = mixed(m.slices, seed);
      for (const char* dtype : {"f64", "f32"}) {
        Format f =
            design(sptv_graph(formats, slice_stats(m), 4), m.a, sptv_design_options(m, dtype));
        REQUIRE(relative_l2_error(interpret(f, v), ref) <
                (std::string(dtype) == "f64" ? 1e-12 : 1e-5));
      }
      for (int batches : {2, 4}) {
        const auto b = sptv_batched_graph(formats, slice_stats(m), 4, batches);
        const Format f = design(b.graph, m.a, sptv_design_options(m, "f64"));
        REQUIRE(relative_l2_error(interpret(f, v), ref) < 1e-12);
      }
    }
  }
}

TEST_CASE("HYB's threshold is the longest fiber length a third of its fibers reach",
          "[graph][sptv]") {
  // Fibers of lengths `lens`, fiber i in slice slice_of[i] (3 slices).
  auto view = [](const std::vector<std::int64_t>& lens, const std::vector<std::int64_t>& slice_of) {
    SptvMatrix m;
    m.slices = 3;
    m.a.rows = static_cast<std::int64_t>(lens.size());
    m.a.cols = 64;
    m.a.row_ptr = {0};
    for (std::size_t i = 0; i < lens.size(); ++i) {
      for (std::int64_t k = 0; k < lens[i]; ++k) m.a.col_idx.push_back(k), m.a.val.push_back(1.0);
      m.a.row_ptr.push_back(static_cast<std::int64_t>(m.a.col_idx.size()));
      m.row_slice.push_back(slice_of[i]);
    }
    return m;
  };
  // 9 fibers in slice 0: 3 of them reach 2 entries (a third), 1 reaches 3: H = 2.
  const auto m = view({1, 1, 1, 1, 1, 1, 2, 2, 3, 40}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 2});
  CHECK(hyb_width(m, {1, 0, 0}) == 2);
  // With slice 2's fiber of 40 entries: 4 of 10 reach 2, 2 reach 3: H = 2 still (the mean,
  // 5.4, would put most of the ELL part's slots in padding).
  CHECK(hyb_width(m, {1, 0, 1}) == 2);
  // Slice 2 alone: its one fiber: H = 40.
  CHECK(hyb_width(m, {0, 0, 1}) == 40);
  // No marked slice holds a fiber: 1.
  CHECK(hyb_width(m, {0, 1, 0}) == 1);
  CHECK(hyb_width(m, {}) == 1);
  // Nearly every fiber of one entry (a mode-0 view): H = 1, the longer ones go to the COO tail.
  std::vector<std::int64_t> lens(299, 1), slices(300, 0);
  lens.push_back(2);
  CHECK(hyb_width(view(lens, slices), {1, 1, 1}) == 1);
}
