// The safetensors reader and writer: byte-exact layout, round trips, and every corruption the
// reader must refuse with an error naming the file and the field.
#include "io/safetensors.hpp"

#include <cstring>
#include <nlohmann/json.hpp>

#include "test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::io;

namespace {
// A file made of a JSON header written by hand and a data buffer.
std::string make_file(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  const std::uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

std::string bytes_of(const std::vector<double>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
}
}  // namespace

TEST_CASE("safetensors layout: header length, padded JSON header, buffer in array order",
          "[io][safetensors]") {
  SafetensorsFile f;
  f.metadata["format"] = "test";
  add_array(f, "b", std::vector<std::int32_t>{7, -8, 9});
  add_array(f, "a", std::vector<double>{1.5, -2.0, 0.25, 4.0}, {2, 2});
  const std::string bytes = serialize_safetensors(f);

  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  CHECK(n % 8 == 0);
  REQUIRE(bytes.size() == 8 + n + 3 * 4 + 4 * 8);
  auto header = nlohmann::json::parse(bytes.substr(8, n));
  CHECK(header["__metadata__"]["format"] == "test");
  CHECK(header["b"]["dtype"] == "I32");
  CHECK(header["b"]["shape"] == nlohmann::json::array({3}));
  CHECK(header["b"]["data_offsets"] == nlohmann::json::array({0, 12}));
  CHECK(header["a"]["dtype"] == "F64");
  CHECK(header["a"]["shape"] == nlohmann::json::array({2, 2}));
  CHECK(header["a"]["data_offsets"] == nlohmann::json::array({12, 44}));
  std::int32_t second = 0;
  std::memcpy(&second, bytes.data() + 8 + n + 4, 4);
  CHECK(second == -8);
  double last = 0;
  std::memcpy(&last, bytes.data() + 8 + n + 12 + 24, 8);
  CHECK(last == 4.0);
}

TEST_CASE("safetensors round trip through a file keeps names, order, dtypes and values",
          "[io][safetensors]") {
  iotest::TempDir dir;
  SafetensorsFile f;
  f.metadata = {{"k", "v"}, {"empty", ""}};
  add_array(f, "z_first", std::vector<std::uint8_t>{1, 2, 3});
  add_array(f, "i64", std::vector<std::int64_t>{-1, std::int64_t{1} << 40});
  add_array(f, "f32", std::vector<float>{0.5f});
  add_array(f, "empty", std::vector<double>{});
  add_array(f, "scalar", std::vector<double>{3.0}, {});
  const std::string path = dir.file("x.safetensors");
  write_safetensors(path, f);
  CHECK(iotest::count_entries(dir.path) == 1);  // no temporary file left

  SafetensorsFile g = read_safetensors(path);
  CHECK(g.metadata == f.metadata);
  REQUIRE(g.arrays.size() == 5);
  CHECK(g.arrays[0].name == "z_first");
  CHECK(g.arrays[1].name == "i64");
  CHECK(get_array<std::uint8_t>(g, "z_first") == std::vector<std::uint8_t>{1, 2, 3});
  CHECK(get_array<std::int64_t>(g, "i64") == std::vector<std::int64_t>{-1, std::int64_t{1} << 40});
  CHECK(get_array<float>(g, "f32") == std::vector<float>{0.5f});
  CHECK(get_array<double>(g, "empty").empty());
  CHECK(g.at("empty").shape == std::vector<std::int64_t>{0});
  CHECK(g.at("scalar").shape.empty());
  CHECK(g.at("scalar").elements() == 1);
  CHECK(get_int_array(g, "z_first") == std::vector<std::int64_t>{1, 2, 3});
  CHECK_THROWS_CONTAINING(get_array<double>(g, "i64"), "i64", "I64", "F64");
  CHECK_THROWS_CONTAINING(g.at("nope"), "nope");
}

TEST_CASE("safetensors writer refuses inconsistent arrays", "[io][safetensors]") {
  SafetensorsFile f;
  CHECK_THROWS_CONTAINING(add_array(f, "x", std::vector<double>{1, 2, 3}, {2, 2}), "x");
  add_array(f, "x", std::vector<double>{1, 2});
  add_array(f, "x", std::vector<double>{3});
  CHECK_THROWS_CONTAINING(serialize_safetensors(f), "duplicate", "x");
  f.arrays.pop_back();
  f.arrays[0].dtype = "Q7";
  CHECK_THROWS_CONTAINING(serialize_safetensors(f), "unknown dtype", "Q7");
  f.arrays[0].dtype = "F32";  // 16 bytes would be four F32 values, not two
  CHECK_THROWS_CONTAINING(serialize_safetensors(f), "shape", "x");
}

TEST_CASE("safetensors reader accepts a hand-made file", "[io][safetensors]") {
  const std::string data = bytes_of({1, 2, 3});
  auto f = parse_safetensors(
      make_file(
          R"({"v":{"dtype":"F64","shape":[3],"data_offsets":[0,24]},"__metadata__":{"a":"b"}})",
          data),
      "ok.safetensors");
  CHECK(get_array<double>(f, "v") == std::vector<double>{1, 2, 3});
  CHECK(f.metadata.at("a") == "b");
  CHECK(looks_like_safetensors(make_file("{}  ", "")));
  CHECK_FALSE(looks_like_safetensors("%%MatrixMarket matrix coordinate real general\n"));
}

TEST_CASE("safetensors reader refuses every kind of corruption with a named error",
          "[io][safetensors]") {
  const std::string src = "bad.safetensors";
  const std::string good_header = R"({"v":{"dtype":"F64","shape":[3],"data_offsets":[0,24]}})";
  const std::string data = bytes_of({1, 2, 3});
  const std::string good = make_file(good_header, data);
  REQUIRE_NOTHROW(parse_safetensors(good, src));

  SECTION("shorter than the length field") {
    CHECK_THROWS_CONTAINING(parse_safetensors(good.substr(0, 5), src), src, "too short");
  }
  SECTION("header length past the end") {
    std::string b = good;
    const std::uint64_t huge = 1u << 20;
    std::memcpy(b.data(), &huge, 8);
    CHECK_THROWS_CONTAINING(parse_safetensors(b, src), src, "header length", "past the end");
  }
  SECTION("truncated data buffer") {
    CHECK_THROWS_CONTAINING(parse_safetensors(good.substr(0, good.size() - 1), src), src,
                            "array 'v'", "data_offsets", "past the end");
  }
  SECTION("truncated inside the header") {
    CHECK_THROWS_CONTAINING(parse_safetensors(good.substr(0, 20), src), src, "header length");
  }
  SECTION("bad JSON") {
    CHECK_THROWS_CONTAINING(parse_safetensors(make_file(R"({"v":{"dtype":)", ""), src), src,
                            "not valid JSON");
    CHECK_THROWS_CONTAINING(parse_safetensors(make_file("[1,2]", ""), src), src,
                            "not a JSON object");
  }
  SECTION("unknown dtype") {
    CHECK_THROWS_CONTAINING(
        parse_safetensors(
            make_file(R"({"v":{"dtype":"F128","shape":[3],"data_offsets":[0,24]}})", data), src),
        src, "array 'v'", "unknown dtype", "F128");
  }
  SECTION("shape product does not match the byte range") {
    CHECK_THROWS_CONTAINING(
        parse_safetensors(
            make_file(R"({"v":{"dtype":"F64","shape":[4],"data_offsets":[0,24]}})", data), src),
        src, "array 'v'", "shape [4]");
    CHECK_THROWS_CONTAINING(
        parse_safetensors(
            make_file(R"({"v":{"dtype":"F32","shape":[3],"data_offsets":[0,24]}})", data), src),
        src, "array 'v'", "F32");
    // A shape whose product overflows must not wrap around to a small number.
    CHECK_THROWS_CONTAINING(
        parse_safetensors(
            make_file(
                R"({"v":{"dtype":"F64","shape":[4294967296,4294967296,3],"data_offsets":[0,24]}})",
                data),
            src),
        src, "array 'v'");
  }
  SECTION("negative or non-integer shape and offsets") {
    CHECK_THROWS_CONTAINING(
        parse_safetensors(
            make_file(R"({"v":{"dtype":"F64","shape":[-3],"data_offsets":[0,24]}})", data), src),
        src, "array 'v' shape", "negative");
    CHECK_THROWS_CONTAINING(
        parse_safetensors(
            make_file(R"({"v":{"dtype":"F64","shape":[3],"data_offsets":[0,24.5]}})", data), src),
        src, "data_offsets end");
    CHECK_THROWS_CONTAINING(
        parse_safetensors(
            make_file(R"({"v":{"dtype":"F64","shape":[3],"data_offsets":[0]}})", data), src),
        src, "data_offsets");
    CHECK_THROWS_CONTAINING(
        parse_safetensors(make_file(R"({"v":{"dtype":"F64","data_offsets":[0,24]}})", data), src),
        src, "missing shape");
  }
  SECTION("offsets out of range") {
    CHECK_THROWS_CONTAINING(
        parse_safetensors(
            make_file(R"({"v":{"dtype":"F64","shape":[3],"data_offsets":[8,32]}})", data), src),
        src, "array 'v'", "past the end");
    CHECK_THROWS_CONTAINING(
        parse_safetensors(
            make_file(R"({"v":{"dtype":"F64","shape":[0],"data_offsets":[24,0]}})", data), src),
        src, "end before they begin");
  }
  SECTION("overlapping ranges") {
    CHECK_THROWS_CONTAINING(
        parse_safetensors(make_file(R"({"a":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},
                                          "b":{"dtype":"F64","shape":[2],"data_offsets":[8,24]}})",
                                    data),
                          src),
        src, "'a'", "'b'", "overlap");
  }
  SECTION("gaps and leftover bytes") {
    CHECK_THROWS_CONTAINING(
        parse_safetensors(
            make_file(R"({"v":{"dtype":"F64","shape":[2],"data_offsets":[8,24]}})", data), src),
        src, "bytes [0, 8)");
    CHECK_THROWS_CONTAINING(
        parse_safetensors(
            make_file(R"({"v":{"dtype":"F64","shape":[2],"data_offsets":[0,16]}})", data), src),
        src, "8 bytes after the last array");
  }
  SECTION("bad metadata") {
    CHECK_THROWS_CONTAINING(parse_safetensors(make_file(R"({"__metadata__":{"n":3}})", ""), src),
                            src, "__metadata__", "'n'", "not a string");
    CHECK_THROWS_CONTAINING(parse_safetensors(make_file(R"({"__metadata__":[1]})", ""), src), src,
                            "__metadata__");
  }
  SECTION("missing file") {
    CHECK_THROWS_CONTAINING(read_safetensors("/nonexistent/dir/x.safetensors"),
                            "/nonexistent/dir/x.safetensors", "cannot open");
  }
}
