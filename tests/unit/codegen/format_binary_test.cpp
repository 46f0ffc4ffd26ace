// The format binary: safetensors round trips (stored, narrowed and formula arrays) and
// corrupted files rejected with an error, never a crash or a wrong answer.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "../graph/graph_test_util.hpp"
#include "codegen/emit.hpp"
#include "codegen_test_util.hpp"
#include "core/reference.hpp"
#include "graph/format.hpp"
#include "graph/interpreter.hpp"
#include "io/safetensors.hpp"
#include "test_support.hpp"

using namespace sparsetune;

namespace {

graph::Graph by_name(const std::string& name) {
  for (const auto& g : test::known_graphs())
    if (g.name == name) return g;
  throw Error("no graph " + name);
}

// Parses `bytes` and interprets the format; "" when both work, else the error.
std::string load_error(const std::string& bytes, const std::vector<double>& x) {
  try {
    const auto f = graph::from_safetensors(io::parse_safetensors(bytes, "f"), "f");
    (void)graph::interpret(f, x);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string with_metadata(const std::string& bytes, const std::string& key,
                          const std::function<void(std::string&)>& edit) {
  auto st = io::parse_safetensors(bytes, "f");
  edit(st.metadata.at(key));
  return io::serialize_safetensors(st);
}

}  // namespace

TEST_CASE("format binaries round-trip for every known format and value type", "[codegen]") {
  const Csr64 a = test::random_matrix(8, 120, 100, 0.05);
  const auto x = test::test_x(a.cols);
  const auto ref = spmv_reference(a, x);
  for (const auto& g : test::known_graphs())
    for (const char* dtype : {"f64", "f32", "f16"}) {
      INFO(g.name << " " << dtype);
      codegen::EmitOptions o;
      o.design.dtype = dtype;
      const auto e = codegen::generate(g, a, o);
      const auto back = graph::from_safetensors(io::parse_safetensors(e.format_bytes, "f"), "f");
      REQUIRE(graph::interpret(back, x) == graph::interpret(e.format, x));
      REQUIRE(back.fingerprint == e.format.fingerprint);
      REQUIRE(back.graph == graph::graph_to_json(g));
      REQUIRE(graph::stored_bytes(back) == graph::stored_bytes(e.format));
      const double tol = std::string(dtype) == "f64"   ? 1e-12
                         : std::string(dtype) == "f32" ? 1e-5
                                                       : 1e-2;
      REQUIRE(relative_l2_error(graph::interpret(back, x), ref) <= tol);
    }
}

TEST_CASE("corrupted format binaries are rejected", "[codegen]") {
  const Csr64 a = test::random_matrix(9, 80, 60, 0.08);
  const auto x = test::test_x(a.cols);
  const auto e = codegen::generate(by_name("csr-adaptive"), a);
  const std::string& good = e.format_bytes;
  REQUIRE(load_error(good, x).empty());

  // Truncations anywhere.
  for (std::size_t n :
       {std::size_t{0}, std::size_t{7}, std::size_t{20}, good.size() / 2, good.size() - 1})
    REQUIRE_FALSE(load_error(good.substr(0, n), x).empty());
  // Flipped bytes in the data section give an error or a well-defined format, never a crash.
  for (std::size_t at = good.size() - 1; at > good.size() - 200 && at > 16; at -= 7) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ 0x5a);
    (void)load_error(bad, x);
  }
  REQUIRE(load_error(with_metadata(good, "format", [](std::string& s) { s = "other"; }), x)
              .find("not a sparsetune format") != std::string::npos);
  REQUIRE(load_error(with_metadata(good, "dtype", [](std::string& s) { s = "f8"; }), x)
              .find("unknown value type") != std::string::npos);
  REQUIRE(load_error(with_metadata(good, "parts",
                                   [](std::string& s) {
                                     auto j = nlohmann::json::parse(s);
                                     j[0]["n_bmt"] = j[0]["n_bmt"].get<int>() + 1;
                                     s = j.dump();
                                   }),
                     x)
              .find("has length") != std::string::npos);
  REQUIRE(load_error(with_metadata(good, "parts",
                                   [](std::string& s) {
                                     auto j = nlohmann::json::parse(s);
                                     j[0]["threads"] = 100;
                                     s = j.dump();
                                   }),
                     x)
              .find("bad thread count") != std::string::npos);
  REQUIRE(
      load_error(
          with_metadata(good, "parts", [](std::string& s) { s = s.substr(0, s.size() / 2); }), x)
          .find("malformed metadata") != std::string::npos);
  // A stored array missing from the file.
  {
    auto st = io::parse_safetensors(good, "f");
    st.arrays.pop_back();
    REQUIRE(load_error(io::serialize_safetensors(st), x).find("is missing") != std::string::npos);
  }
  // An index array whose values point outside the stream: an error, not a read out of bounds.
  {
    auto st = io::parse_safetensors(good, "f");
    for (auto& arr : st.arrays)
      if (arr.name.find("nz_col") != std::string::npos ||
          arr.name.find("bmt_size") != std::string::npos)
        std::memset(arr.bytes.data(), 0x7f, arr.bytes.size());
    REQUIRE(load_error(io::serialize_safetensors(st), x).find("out of range") != std::string::npos);
  }
}

TEST_CASE("emit writes four complete files and nothing else", "[codegen]") {
  const auto dir = std::filesystem::temp_directory_path() / "sparsetune_emit_test";
  std::filesystem::remove_all(dir);
  const Csr64 a = test::random_matrix(10, 50, 40, 0.1);
  const auto g = by_name("hyb");
  const auto e = codegen::generate(g, a);
  const auto files = codegen::write_emitted(e, g, (dir / "out").string());
  REQUIRE(files.size() == 4);
  std::size_t n = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir / "out")) {
    ++n;
    REQUIRE(f.path().extension() != ".tmp");
  }
  REQUIRE(n == 4);
  const auto back = graph::read_format((dir / "out" / "format.safetensors").string());
  const auto x = test::test_x(a.cols);
  REQUIRE(relative_l2_error(graph::interpret(back, x), spmv_reference(a, x)) <= 1e-12);
  REQUIRE(graph::graph_to_json(graph::read_graph((dir / "out" / "graph.json").string())) ==
          graph::graph_to_json(g));
  // The reference vectors: raw doubles, y = A x in fp64.
  const auto ref = codegen::write_reference(a, (dir / "out").string());
  REQUIRE(ref.size() == 2);
  std::vector<double> xs(a.cols), ys(a.rows);
  std::ifstream(ref[0], std::ios::binary).read(reinterpret_cast<char*>(xs.data()), a.cols * 8);
  std::ifstream(ref[1], std::ios::binary).read(reinterpret_cast<char*>(ys.data()), a.rows * 8);
  REQUIRE(std::filesystem::file_size(ref[0]) == static_cast<std::uintmax_t>(a.cols) * 8);
  REQUIRE(ys == spmv_reference(a, xs));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a corrupted table model is rejected", "[codegen]") {
  const Csr64 a = test::stencil5(10);
  const auto x = test::test_x(a.cols);
  const auto e = codegen::generate(by_name("dia-hybrid"), a);
  REQUIRE(e.format.parts[0].array(graph::Arr::nz_col).model.kind == graph::ArrayModel::Kind::Table);
  REQUIRE(load_error(e.format_bytes, x).empty());
  const auto edit_col = [&](const std::function<void(nlohmann::json&)>& f) {
    return with_metadata(e.format_bytes, "parts", [&](std::string& s) {
      auto j = nlohmann::json::parse(s);
      f(j[0]["arrays"]["nz_col"]["model"]);
      s = j.dump();
    });
  };
  // An offset missing for the last period, or a clamp range that is empty.
  REQUIRE(
      load_error(edit_col([](nlohmann::json& m) { m["table"].erase(m["table"].size() - 1); }), x)
          .find("bad table model") != std::string::npos);
  REQUIRE(load_error(edit_col([](nlohmann::json& m) { m["b"] = m["c"].get<long long>() + 1; }), x)
              .find("bad table model") != std::string::npos);
  // A clamp that lets columns leave the matrix.
  REQUIRE(load_error(edit_col([](nlohmann::json& m) { m["c"] = m["c"].get<long long>() + 5; }), x)
              .find("out of range") != std::string::npos);
}

TEST_CASE("kernel.h refuses a format binary it was not generated for, by name", "[codegen]") {
  const std::string nvcc = test::nvcc_path();
  if (nvcc.empty()) {
    WARN("no nvcc on this machine: kernel.h's load() is not compiled here");
    return;
  }
  testing::TempDir t("sparsetune-wrong-binary");
  const Csr64 a = test::stencil5(12), b = test::stencil5(13);
  // The same matrix with another graph, the same graph on another matrix, and a flipped byte.
  codegen::write_emitted(codegen::generate(by_name("csr-vector"), a), by_name("csr-vector"),
                         (t.path / "a").string());
  codegen::write_emitted(codegen::generate(by_name("csr-scalar"), a), by_name("csr-scalar"),
                         (t.path / "other-graph").string());
  codegen::write_emitted(codegen::generate(by_name("csr-vector"), b), by_name("csr-vector"),
                         (t.path / "other-matrix").string());
  {
    std::ifstream in(t.path / "a" / "format.safetensors", std::ios::binary);
    std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    bytes[12] ^= 0x20;  // inside the JSON header: same size, same length, other content
    std::ofstream(t.path / "flipped.safetensors", std::ios::binary) << bytes;
  }
  // A host program that only loads: exit 3 when load() refuses the file as the wrong format.
  std::ofstream(t.path / "a" / "load.cu")
      << "#include \"kernel.h\"\nint main(int, char** argv) {\n"
         "  sparsetune_kernel::Format f;\n"
         "  const cudaError_t e = sparsetune_kernel::load(argv[1], &f);\n"
         "  return e == cudaErrorInvalidValue ? 3 : 0;\n}\n";
  const std::string dir = (t.path / "a").string();
  REQUIRE(std::system(("cd '" + dir + "' && " + nvcc +
                       " -arch=sm_90 -o load load.cu kernel.cu > nvcc.log 2>&1")
                          .c_str()) == 0);
  const auto load = [&](const std::filesystem::path& file, std::string& err) {
    const std::string log = (t.path / "err.txt").string();
    const int rc =
        std::system(("'" + dir + "/load' '" + file.string() + "' 2> '" + log + "'").c_str());
    std::ifstream in(log);
    err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  };
  std::string err;
  CHECK(load(t.path / "other-graph" / "format.safetensors", err) == 3);
  CHECK_THAT(err, Catch::Contains("is not the format this header was generated for"));
  CHECK(load(t.path / "other-matrix" / "format.safetensors", err) == 3);
  CHECK_THAT(err, Catch::Contains("differs"));
  CHECK(load(t.path / "flipped.safetensors", err) == 3);
  CHECK_THAT(err, Catch::Contains("its header (another graph, matrix or version) differs"));
  CHECK(load(t.path / "missing.safetensors", err) == 3);
  CHECK_THAT(err, Catch::Contains("cannot open"));
  // Its own file passes every check (without a GPU the first allocation then fails otherwise).
  CHECK(load(t.path / "a" / "format.safetensors", err) != 3);
}

TEST_CASE("a format binary with a float where an integer belongs is refused (fuzz_format finding)",
          "[codegen]") {
  const Csr64 a = test::stencil5(6);
  const auto e = codegen::generate(by_name("csr-vector"), a);
  const auto x = test::test_x(a.cols);
  // 83922337203685477580711 does not fit int64: the parser reads it as a float.
  for (const char* v : {"83922337203685477580711", "2.5", "1e300"}) {
    INFO(v);
    const auto bytes = with_metadata(e.format_bytes, "parts", [&](std::string& s) {
      auto j = nlohmann::json::parse(s);
      j[0]["nnz_stored"] = nlohmann::json::parse(v);
      s = j.dump();
    });
    CHECK_THAT(load_error(bytes, x), Catch::Contains("where integers belong"));
  }
}

TEST_CASE("the tool's format reader names the file and refuses values no matrix has", "[codegen]") {
  const Csr64 a = test::random_matrix(9, 80, 60, 0.08);
  const auto e = codegen::generate(by_name("csr-adaptive"), a);
  testing::TempDir t("sparsetune-format-read");
  const auto read = [&](const std::string& bytes) {
    const auto path = t.file("format.safetensors");
    std::ofstream(path, std::ios::binary) << bytes;
    return graph::read_format(path);
  };
  CHECK(read(e.format_bytes).nnz == a.nnz());
  // Metadata saying f16 over fp64 values: the kernel would read them as halves.
  CHECK_THROWS_WITH(read(with_metadata(e.format_bytes, "dtype", [](std::string& s) { s = "f16"; })),
                    Catch::Contains("format.safetensors") &&
                        Catch::Contains("has dtype F64, the metadata's value type is f16"));
  // A NaN written into the values.
  auto st = io::parse_safetensors(e.format_bytes, "f");
  for (auto& arr : st.arrays)
    if (arr.name.find("nz_val") != std::string::npos) {
      const double nan = std::nan("");
      std::memcpy(arr.bytes.data(), &nan, sizeof nan);
    }
  CHECK_THROWS_WITH(read(io::serialize_safetensors(st)),
                    Catch::Contains("format.safetensors") && Catch::Contains("not finite at 0"));
  // A rule checked below the reader names the file too.
  CHECK_THROWS_WITH(read(with_metadata(e.format_bytes, "dtype", [](std::string& s) { s = "f8"; })),
                    Catch::Contains("format.safetensors") && Catch::Contains("unknown value type"));
}
