// A segmented COO's row steps packed into its column words (graph::pack_row_delta): when it
// packs, by hand; that the format computes what the unpacked one does, through the binary; the
// kernel's accessors; and binaries that describe a packing they cannot hold.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>

#include "../graph/graph_test_util.hpp"
#include "codegen/emit.hpp"
#include "codegen/optimizer.hpp"
#include "codegen_test_util.hpp"
#include "core/reference.hpp"
#include "format_file_edit.hpp"
#include "graph/designer.hpp"
#include "graph/interpreter.hpp"
#include "io/safetensors.hpp"

using namespace sparsetune;
using Kind = graph::ArrayModel::Kind;

namespace {

graph::PartFormat part(const std::string& col_dtype, std::vector<std::int64_t> col,
                       std::vector<std::int64_t> delta) {
  graph::PartFormat p;
  p.arrays["nz_col"] = test::int_array(col_dtype, std::move(col));
  p.arrays["nz_row_delta"] = test::int_array("I8", std::move(delta));
  return p;
}

}  // namespace

TEST_CASE("row steps pack above the column bits only where both fit one word", "[codegen]") {
  SECTION("32-bit columns: the shift is the largest column's width") {
    auto p = part("I32", {5, 3, 7}, {0, 1, 2});
    REQUIRE(graph::pack_row_delta(p));
    const auto& d = p.array(graph::Arr::nz_row_delta);
    REQUIRE(d.model.kind == Kind::Packed);
    REQUIRE(d.model.a == 3);  // 7 takes 3 bits
    REQUIRE_FALSE(d.stored());
    REQUIRE(d.ints == std::vector<std::int64_t>{0, 1, 2});  // the values stay
  }
  SECTION("16-bit columns fill the word exactly: 14 bits of column, 2 of step") {
    auto p = part("I16", {16383, 0}, {3, 1});
    REQUIRE(graph::pack_row_delta(p));
    REQUIRE(p.array(graph::Arr::nz_row_delta).model.a == 14);
  }
  SECTION("one bit too many stays stored") {
    auto p = part("I16", {16384, 0}, {3, 1});  // 15 + 2 bits
    REQUIRE_FALSE(graph::pack_row_delta(p));
    REQUIRE(p.array(graph::Arr::nz_row_delta).stored());
  }
  SECTION("8-bit columns, a negative step, no entries: stays stored") {
    auto a = part("I8", {5, 3}, {0, 1});
    auto b = part("I32", {5, 3}, {0, -1});
    auto c = part("I32", {}, {});
    REQUIRE_FALSE(graph::pack_row_delta(a));
    REQUIRE_FALSE(graph::pack_row_delta(b));
    REQUIRE_FALSE(graph::pack_row_delta(c));
  }
  SECTION("column 0 alone still leaves one bit of column") {
    auto p = part("I32", {0, 0, 0}, {0, 5, 1});
    REQUIRE(graph::pack_row_delta(p));
    REQUIRE(p.array(graph::Arr::nz_row_delta).model.a == 1);
  }
}

TEST_CASE("a packed segmented COO computes what the unpacked one does, through the binary",
          "[codegen]") {
  // 70,000 columns need 17 bits: 32-bit column words with room for the steps. Empty rows make
  // steps above 1.
  const Csr64 a = test::random_matrix(5, 300, 70000, 0.0004, 0.4);
  const auto x = test::test_x(a.cols);
  const auto ref = spmv_reference(a, x);
  for (const char* name : {"segmented-coo", "segmented-coo-interleaved"}) {
    INFO(name);
    const auto g = test::known_graph(name);
    codegen::EmitOptions plain_o, packed_o;
    plain_o.optimizer.pack = false;
    const auto plain = codegen::generate(g, a, plain_o);
    const auto packed = codegen::generate(g, a, packed_o);
    REQUIRE(packed.report.packed == 1);
    const auto& pp = packed.format.parts.at(0);
    const auto& delta = pp.array(graph::Arr::nz_row_delta);
    REQUIRE(delta.model.kind == Kind::Packed);
    REQUIRE(delta.model.a == 17);
    // One byte an entry fewer: the steps' own array is gone.
    REQUIRE(graph::stored_bytes(plain.format) - graph::stored_bytes(packed.format) ==
            pp.nnz_stored);
    const auto y = graph::interpret(packed.format, x);
    REQUIRE(y == graph::interpret(plain.format, x));
    REQUIRE(test::max_abs_diff(y, ref) < 1e-12);
    // The file's words are column | step << 17, entry by entry.
    const auto words = test::file_elements(packed.format_bytes, "nz_col", 4);
    const auto& col = pp.array(graph::Arr::nz_col).ints;
    REQUIRE(words.size() == col.size());
    bool stepped = false;
    for (std::size_t k = 0; k < words.size(); ++k) {
      REQUIRE(words[k] == (col[k] | delta.ints[k] << 17));
      stepped = stepped || delta.ints[k] > 1;
    }
    REQUIRE(stepped);
    REQUIRE(io::parse_safetensors(packed.format_bytes, "f").find("p0.nz_row_delta") == nullptr);
    // Read back: both arrays unpacked, the same product.
    const auto back = graph::from_safetensors(io::parse_safetensors(packed.format_bytes, "f"), "f");
    REQUIRE(back.parts[0].array(graph::Arr::nz_col).ints == col);
    REQUIRE(back.parts[0].array(graph::Arr::nz_row_delta).ints == delta.ints);
    REQUIRE(graph::interpret(back, x) == y);
    // The kernel reads both from one word and takes no step array.
    const auto& src = packed.kernels.source;
    REQUIRE(src.find("#define A_nz_row_delta(i) ((st_idx_t)((unsigned)p_nz_col[(i)] >> 17))") !=
            std::string::npos);
    REQUIRE(src.find("#define A_nz_col(i) ((st_idx_t)((unsigned)p_nz_col[(i)] & 131071u))") !=
            std::string::npos);
    REQUIRE(src.find("p_nz_row_delta") == std::string::npos);
    test::require_all_compile({{name, src}});
  }
}

TEST_CASE("a top bit set in a 16-bit word reads back as a step, not a sign", "[codegen]") {
  // Columns below 2^14 (14 bits) with steps of 3 (2 bits): the word's top bit is the step's.
  std::vector<std::tuple<std::int64_t, std::int64_t, double>> t;
  for (std::int64_t r = 0; r < 120; r += 3)
    for (std::int64_t k = 0; k < 3; ++k)
      t.emplace_back(r, (r * 7919 + k * 5003) % 16383 + (r == 60 && k == 2), 0.25 * (k + 1) - r);
  const Csr64 a = test::from_triples(121, 16384, t);
  const auto x = test::test_x(a.cols);
  const auto e = codegen::generate(test::known_graph("segmented-coo"), a, codegen::EmitOptions{});
  const auto& p = e.format.parts.at(0);
  REQUIRE(p.array(graph::Arr::nz_col).dtype == "I16");
  REQUIRE(p.array(graph::Arr::nz_row_delta).model.kind == Kind::Packed);
  REQUIRE(p.array(graph::Arr::nz_row_delta).model.a == 14);
  bool top = false;  // some word has its top bit set (a step of 2 or 3)
  for (auto d : p.array(graph::Arr::nz_row_delta).ints) top = top || d >= 2;
  REQUIRE(top);
  const auto back = graph::from_safetensors(io::parse_safetensors(e.format_bytes, "f"), "f");
  REQUIRE(back.parts[0].array(graph::Arr::nz_row_delta).ints ==
          p.array(graph::Arr::nz_row_delta).ints);
  REQUIRE(test::max_abs_diff(graph::interpret(back, x), spmv_reference(a, x)) < 1e-12);
  REQUIRE(e.kernels.source.find("(unsigned)(unsigned short)p_nz_col[(i)]") != std::string::npos);
}

TEST_CASE("a binary describing a packing it cannot hold is refused", "[codegen]") {
  const Csr64 a = test::random_matrix(5, 300, 70000, 0.0004, 0.4);
  const auto e = codegen::generate(test::known_graph("segmented-coo"), a, codegen::EmitOptions{});
  REQUIRE(test::format_load_error(e.format_bytes).empty());
  auto arrays = [](nlohmann::json& parts) -> nlohmann::json& { return parts[0]["arrays"]; };
  for (int shift : {0, 32, -3}) {
    INFO(shift);
    const auto bad = test::with_parts(e.format_bytes, [&](nlohmann::json& parts) {
      arrays(parts)["nz_row_delta"]["model"]["shift"] = shift;
    });
    REQUIRE_THAT(test::format_load_error(bad),
                 Catch::Contains("part 0") && Catch::Contains("packed"));
  }
  // Only nz_row_delta packs, and only into nz_col.
  auto bad = test::with_parts(e.format_bytes, [&](nlohmann::json& parts) {
    arrays(parts)["nz_row_delta"]["model"]["in"] = "nz_val";
  });
  REQUIRE_THAT(test::format_load_error(bad), Catch::Contains("cannot be packed"));
  bad = test::with_parts(e.format_bytes, [&](nlohmann::json& parts) {
    arrays(parts)["bmt_row"]["model"] = {{"kind", "packed"}, {"in", "nz_col"}, {"shift", 17}};
  });
  REQUIRE_THAT(test::format_load_error(bad), Catch::Contains("bmt_row cannot be packed"));
  // A step packed into a column too narrow to hold it: the unpacked column leaves x.
  bad = test::with_parts(e.format_bytes, [&](nlohmann::json& parts) {
    arrays(parts)["nz_row_delta"]["model"]["shift"] = 20;
  });
  REQUIRE_FALSE(test::format_load_error(bad).empty());
}
