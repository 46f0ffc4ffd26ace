// Column words of 17-24 bits stored as 16 + 8 bits (graph::split_col_words): when it splits, by
// hand; that the format computes what the unsplit one does, through the binary, with and without
// row steps packed into the words; the kernel's accessors; and binaries that describe a split
// they cannot hold.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>

#include "../graph/graph_test_util.hpp"
#include "codegen/emit.hpp"
#include "codegen/optimizer.hpp"
#include "codegen_test_util.hpp"
#include "core/reference.hpp"
#include "format_file_edit.hpp"
#include "graph/interpreter.hpp"
#include "io/safetensors.hpp"

using namespace sparsetune;
using Kind = graph::ArrayModel::Kind;

namespace {

codegen::EmitOptions split_on() {
  codegen::EmitOptions o;
  o.optimizer.split_words = true;
  return o;
}

}  // namespace

TEST_CASE("32-bit column words split into 16 + 8 bits only where every word fits 24", "[codegen]") {
  SECTION("the high byte of each column, the columns unchanged") {
    graph::PartFormat p;
    p.arrays["nz_col"] = test::int_array("I32", {70000, 5, 16777215});
    REQUIRE(graph::split_col_words(p));
    REQUIRE(p.array(graph::Arr::nz_col).dtype == "I16");
    REQUIRE(p.array(graph::Arr::nz_col).ints == std::vector<std::int64_t>{70000, 5, 16777215});
    const auto& hi = p.array(graph::Arr::nz_col_hi);
    REQUIRE(hi.dtype == "I8");
    REQUIRE(hi.stored());
    REQUIRE(hi.ints == std::vector<std::int64_t>{1, 0, 255});  // 70000 = 0x11170
    REQUIRE(graph::col_word_bits(p) == 24);
  }
  SECTION("a packed step is part of the word") {
    graph::PartFormat p;
    p.arrays["nz_col"] = test::int_array("I32", {70000, 3});
    p.arrays["nz_row_delta"] = test::int_array("I8", {0, 3});
    REQUIRE(graph::pack_row_delta(p));  // shift 17
    REQUIRE(graph::split_col_words(p));
    // 3 << 17 = 0x60000: high byte 6.
    REQUIRE(p.array(graph::Arr::nz_col_hi).ints == std::vector<std::int64_t>{1, 6});
  }
  SECTION("a word of 25 bits, a 16-bit column, no entries, a column already split: no split") {
    graph::PartFormat wide, narrow, empty, twice;
    wide.arrays["nz_col"] = test::int_array("I32", {16777216, 1});
    narrow.arrays["nz_col"] = test::int_array("I16", {300, 1});
    empty.arrays["nz_col"] = test::int_array("I32", {});
    twice.arrays["nz_col"] = test::int_array("I32", {70000});
    REQUIRE(graph::split_col_words(twice));
    REQUIRE_FALSE(graph::split_col_words(wide));
    REQUIRE_FALSE(graph::split_col_words(narrow));
    REQUIRE_FALSE(graph::split_col_words(empty));
    REQUIRE_FALSE(graph::split_col_words(twice));
    REQUIRE_FALSE(wide.has(graph::Arr::nz_col_hi));
    // Steps that push the packed word past 24 bits.
    graph::PartFormat stepped;
    stepped.arrays["nz_col"] = test::int_array("I32", {70000, 3});
    stepped.arrays["nz_row_delta"] = test::int_array("I8", {0, 100});  // 17 + 7 bits = 24: fits
    REQUIRE(graph::pack_row_delta(stepped));
    REQUIRE(graph::split_col_words(stepped));
    graph::PartFormat over;
    over.arrays["nz_col"] = test::int_array("I32", {70000, 3});
    over.arrays["nz_row_delta"] = test::int_array("I16", {0, 128});  // 17 + 8 bits
    REQUIRE(graph::pack_row_delta(over));
    REQUIRE_FALSE(graph::split_col_words(over));
  }
}

TEST_CASE("split column words compute what 32-bit ones do, through the binary", "[codegen]") {
  // 70,000 columns need 17 bits; empty rows make steps above 1 in the segmented COOs.
  const Csr64 a = test::random_matrix(5, 300, 70000, 0.0004, 0.4);
  const auto x = test::test_x(a.cols);
  const auto ref = spmv_reference(a, x);
  for (const char* name : {"csr-scalar", "segmented-coo", "segmented-coo-interleaved"}) {
    INFO(name);
    const auto g = test::known_graph(name);
    const auto whole = codegen::generate(g, a, codegen::EmitOptions{});
    const auto split = codegen::generate(g, a, split_on());
    REQUIRE_FALSE(whole.format.parts.at(0).has(graph::Arr::nz_col_hi));  // off by default
    REQUIRE(split.report.split == 1);
    const auto& sp = split.format.parts.at(0);
    const bool packed = sp.has(graph::Arr::nz_row_delta) &&
                        sp.array(graph::Arr::nz_row_delta).model.kind == Kind::Packed;
    REQUIRE(packed == (std::string(name) != "csr-scalar"));
    // One byte an entry fewer.
    REQUIRE(graph::stored_bytes(whole.format) - graph::stored_bytes(split.format) == sp.nnz_stored);
    const auto y = graph::interpret(split.format, x);
    REQUIRE(y == graph::interpret(whole.format, x));
    REQUIRE(test::max_abs_diff(y, ref) < 1e-12);
    // The file's words: low 16 bits in nz_col, bits 16-23 in nz_col_hi.
    const auto lo = test::file_elements(split.format_bytes, "nz_col", 2);
    const auto hi = test::file_elements(split.format_bytes, "nz_col_hi", 1);
    const auto& col = sp.array(graph::Arr::nz_col).ints;
    const auto delta =
        packed ? sp.array(graph::Arr::nz_row_delta).ints : std::vector<std::int64_t>(col.size(), 0);
    REQUIRE(lo.size() == col.size());
    REQUIRE(hi.size() == col.size());
    bool high = false;
    for (std::size_t k = 0; k < col.size(); ++k) {
      const std::int64_t word = col[k] | (packed ? delta[k] << 17 : 0);
      REQUIRE(lo[k] == (word & 0xffff));
      REQUIRE(hi[k] == word >> 16);
      high = high || hi[k] > 1;  // a step above the column's bits
    }
    REQUIRE(high == packed);
    // Read back: the columns joined (and the steps unpacked), the same product.
    const auto back = graph::from_safetensors(io::parse_safetensors(split.format_bytes, "f"), "f");
    REQUIRE(back.parts[0].array(graph::Arr::nz_col).ints == col);
    if (packed) REQUIRE(back.parts[0].array(graph::Arr::nz_row_delta).ints == delta);
    REQUIRE(graph::interpret(back, x) == y);
    // The kernel joins both halves of each word.
    const auto& src = split.kernels.source;
    const std::string word =
        "((unsigned)(unsigned short)p_nz_col[(i)] | (unsigned)(unsigned char)p_nz_col_hi[(i)] "
        "<< 16)";
    REQUIRE(src.find(packed ? "#define A_nz_col(i) ((st_idx_t)(" + word + " & 131071u))"
                            : "#define A_nz_col(i) ((st_idx_t)" + word + ")") != std::string::npos);
    if (packed)
      REQUIRE(src.find("#define A_nz_row_delta(i) ((st_idx_t)(" + word + " >> 17))") !=
              std::string::npos);
    REQUIRE(src.find("const signed char* __restrict__ p_nz_col_hi") != std::string::npos);
    test::require_all_compile({{name, src}});
  }
}

TEST_CASE("a high byte with its top bit set reads back as column bits, not a sign", "[codegen]") {
  // Columns from 2^23 up: bits 16-23 of 0x800000 and above are 0x80 and more.
  std::vector<std::tuple<std::int64_t, std::int64_t, double>> t;
  for (std::int64_t r = 0; r < 40; ++r)  // no formula fits them: stored
    t.emplace_back(r, 8388608 + (r * r * 7919) % 600011, 0.5 + r);
  t.emplace_back(3, 7, -2.0);
  const Csr64 a = test::from_triples(40, 9000000, t);
  const auto x = test::test_x(a.cols);
  const auto e = codegen::generate(test::known_graph("csr-scalar"), a, split_on());
  REQUIRE(e.report.split == 1);
  const auto hi = test::file_elements(e.format_bytes, "nz_col_hi", 1);
  REQUIRE(*std::max_element(hi.begin(), hi.end()) >= 0x80);
  const auto back = graph::from_safetensors(io::parse_safetensors(e.format_bytes, "f"), "f");
  REQUIRE(back.parts[0].array(graph::Arr::nz_col).ints ==
          e.format.parts[0].array(graph::Arr::nz_col).ints);
  REQUIRE(test::max_abs_diff(graph::interpret(back, x), spmv_reference(a, x)) < 1e-12);
}

TEST_CASE("a binary describing a split it cannot hold is refused", "[codegen]") {
  const Csr64 a = test::random_matrix(5, 300, 70000, 0.0004, 0.4);
  const auto e = codegen::generate(test::known_graph("segmented-coo"), a, split_on());
  REQUIRE(test::format_load_error(e.format_bytes).empty());
  auto arrays = [](nlohmann::json& parts) -> nlohmann::json& { return parts[0]["arrays"]; };
  // nz_col_hi beside a 32-bit nz_col: the high bytes of a split binary added to an unsplit one.
  const auto whole =
      codegen::generate(test::known_graph("segmented-coo"), a, codegen::EmitOptions{});
  auto st = io::parse_safetensors(whole.format_bytes, "f");
  const auto split_st = io::parse_safetensors(e.format_bytes, "f");
  st.arrays.push_back(*split_st.find("p0.nz_col_hi"));
  auto parts = nlohmann::json::parse(st.metadata.at("parts"));
  auto split_parts = nlohmann::json::parse(split_st.metadata.at("parts"));
  arrays(parts)["nz_col_hi"] = arrays(split_parts)["nz_col_hi"];
  st.metadata.at("parts") = parts.dump();
  REQUIRE_THAT(test::format_load_error(io::serialize_safetensors(st)),
               Catch::Contains("part 0") && Catch::Contains("nz_col_hi needs a stored 16-bit"));
  // High bytes described as another type than the file holds.
  auto bad = test::with_parts(
      e.format_bytes, [&](nlohmann::json& parts) { arrays(parts)["nz_col_hi"]["dtype"] = "I16"; });
  REQUIRE_THAT(test::format_load_error(bad), Catch::Contains("nz_col_hi"));
  // Without its high bytes the columns are not the matrix's: refused, not misread.
  bad = test::with_parts(e.format_bytes,
                         [&](nlohmann::json& parts) { arrays(parts).erase("nz_col_hi"); });
  REQUIRE_FALSE(test::format_load_error(bad).empty());
}
