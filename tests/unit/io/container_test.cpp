// Round trips mtx -> CSR -> mtx / mtx.gz / safetensors -> CSR, and the validation of the
// matrix container.
#include <cmath>
#include <limits>

#include "core/convert.hpp"
#include "io/file_bytes.hpp"
#include "io/matrix_container.hpp"
#include "io/matrix_file.hpp"
#include "io/matrix_market.hpp"
#include "test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::io;

namespace {
// Values that print badly with too few digits, an empty row and an empty last column.
const char* kText =
    "%%MatrixMarket matrix coordinate real general\n"
    "4 5 7\n"
    "1 1 0.1\n"
    "1 4 -3.3333333333333335\n"
    "2 2 1e-300\n"
    "2 1 1.7976931348623157e308\n"
    "4 4 0\n"
    "4 1 -2.5e-7\n"
    "4 2 123456789012345.67\n";

Csr64 sample() {
  return coo_to_csr<std::int64_t, std::int64_t>(parse_matrix_market(kText, "sample.mtx"));
}

std::string tamper_metadata(const SafetensorsFile& f, const std::string& key,
                            const std::string& value) {
  SafetensorsFile g = f;
  g.metadata[key] = value;
  return serialize_safetensors(g);
}
}  // namespace

TEST_CASE("round trips through every output format give the identical matrix", "[io][roundtrip]") {
  iotest::TempDir dir;
  const Csr64 a = sample();
  REQUIRE(a.nnz() == 7);
  for (const char* name : {"a.mtx", "a.mtx.gz", "a.safetensors"}) {
    INFO(name);
    write_matrix(dir.file(name), a);
    const Csr64 b = read_matrix(dir.file(name));
    CHECK(same_matrix(a, b));  // exact: %.17g and raw doubles lose nothing
  }
  write_matrix(dir.file("coo.safetensors"), a, Layout::coo);
  CHECK(same_matrix(a, read_matrix(dir.file("coo.safetensors"))));
  CHECK(is_gzip(iotest::read_bytes(dir.file("a.mtx.gz"))));
  const std::string text = iotest::read_bytes(dir.file("a.mtx"));
  CHECK(text.rfind("%%MatrixMarket matrix coordinate real general\n", 0) == 0);
  CHECK(text.find("\n4 5 7\n") != std::string::npos);
  CHECK(text.find("\n1 1 0.10000000000000001\n") != std::string::npos);  // %.17g
  CHECK(iotest::count_entries(dir.path) == 4);  // no temporary files left behind

  // A second generation is byte-identical to the first.
  write_matrix(dir.file("b.mtx"), read_matrix(dir.file("a.mtx")));
  CHECK(iotest::read_bytes(dir.file("b.mtx")) == text);
  CHECK_THROWS_CONTAINING(write_matrix(dir.file("a.txt"), a), "a.txt", "unknown output format");
}

TEST_CASE("symmetric input round trips as its expanded general matrix", "[io][roundtrip]") {
  iotest::TempDir dir;
  iotest::write_text(dir.file("s.mtx"),
                     "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n2 1\n3 2\n3 3\n");
  const Csr64 a = read_matrix(dir.file("s.mtx"));
  write_matrix(dir.file("s.safetensors"), a);
  write_matrix(dir.file("s2.mtx.gz"), a);
  CHECK(same_matrix(a, read_matrix(dir.file("s.safetensors"))));
  CHECK(same_matrix(a, read_matrix(dir.file("s2.mtx.gz"))));
  CHECK(a.nnz() == 5);
}

TEST_CASE("container layout: arrays, 32-bit indices, metadata", "[io][container]") {
  const Csr64 a = sample();
  SafetensorsFile f = matrix_to_safetensors(a);
  CHECK(f.metadata.at("format") == "sparsetune-matrix");
  CHECK(f.metadata.at("version") == "1");
  CHECK(f.metadata.at("layout") == "csr");
  CHECK(f.metadata.at("rows") == "4");
  CHECK(f.metadata.at("cols") == "5");
  CHECK(f.metadata.at("nnz") == "7");
  CHECK(f.at("row_ptr").dtype == "I32");
  CHECK(get_array<std::int32_t>(f, "row_ptr") == std::vector<std::int32_t>{0, 2, 4, 4, 7});
  CHECK(get_array<std::int32_t>(f, "col_idx") == std::vector<std::int32_t>{0, 3, 0, 1, 0, 1, 3});
  CHECK(get_array<double>(f, "val") == a.val);
  SafetensorsFile c = matrix_to_safetensors(a, Layout::coo);
  CHECK(c.metadata.at("layout") == "coo");
  CHECK(get_array<std::int32_t>(c, "row") == std::vector<std::int32_t>{0, 0, 1, 1, 3, 3, 3});
  CHECK(get_array<std::int32_t>(c, "col") == std::vector<std::int32_t>{0, 3, 0, 1, 0, 1, 3});

  // Dimensions beyond 32 bits switch the index arrays to I64.
  Csr64 wide;
  wide.rows = 2;
  wide.cols = std::int64_t{1} << 33;
  wide.row_ptr = {0, 1, 1};
  wide.col_idx = {(std::int64_t{1} << 32) + 5};
  wide.val = {2.0};
  SafetensorsFile w = matrix_to_safetensors(wide);
  CHECK(w.at("row_ptr").dtype == "I32");
  CHECK(w.at("col_idx").dtype == "I64");
  CHECK(same_matrix(wide, matrix_from_safetensors(w, "w")));

  Csr64 nan = a;
  nan.val[2] = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_CONTAINING(matrix_to_safetensors(nan), "non-finite");
}

TEST_CASE("container reader refuses inconsistent structure with named errors", "[io][container]") {
  const std::string src = "m.safetensors";
  const Csr64 a = sample();
  const SafetensorsFile f = matrix_to_safetensors(a);
  auto load = [&](const std::string& bytes) {
    return matrix_from_safetensors(parse_safetensors(bytes, src), src);
  };
  REQUIRE(same_matrix(a, load(serialize_safetensors(f))));

  auto with_array = [&](const std::string& name, auto values) {
    SafetensorsFile g = f;
    for (auto& arr : g.arrays)
      if (arr.name == name) {
        SafetensorsFile one;
        add_array(one, name, values);
        arr = one.arrays[0];
      }
    return serialize_safetensors(g);
  };
  CHECK_THROWS_CONTAINING(load(tamper_metadata(f, "format", "other")), src, "not a sparsetune");
  CHECK_THROWS_CONTAINING(load(tamper_metadata(f, "version", "9")), src, "version '9'");
  CHECK_THROWS_CONTAINING(load(tamper_metadata(f, "layout", "ell")), src, "layout");
  CHECK_THROWS_CONTAINING(load(tamper_metadata(f, "rows", "x")), src, "'rows'");
  CHECK_THROWS_CONTAINING(load(tamper_metadata(f, "rows", "5")), src, "row_ptr", "shape [6]");
  CHECK_THROWS_CONTAINING(load(tamper_metadata(f, "nnz", "6")), src, "col_idx", "shape [6]");
  CHECK_THROWS_CONTAINING(load(tamper_metadata(f, "cols", "3")), src, "col_idx[1] = 3",
                          "outside the 3 columns");
  CHECK_THROWS_CONTAINING(load(with_array("row_ptr", std::vector<std::int32_t>{0, 4, 2, 4, 7})),
                          src, "row_ptr decreases at row 1");
  CHECK_THROWS_CONTAINING(load(with_array("row_ptr", std::vector<std::int32_t>{1, 2, 4, 4, 7})),
                          src, "row_ptr[0] must be 0");
  CHECK_THROWS_CONTAINING(load(with_array("row_ptr", std::vector<std::int32_t>{0, 2, 4, 4, 6})),
                          src, "row_ptr ends at 6");
  CHECK_THROWS_CONTAINING(
      load(with_array("col_idx", std::vector<std::int32_t>{0, 3, 0, -1, 0, 1, 3})), src,
      "col_idx[3] = -1");
  CHECK_THROWS_CONTAINING(load(with_array("col_idx", std::vector<float>(7, 0.0f))), src, "col_idx",
                          "F32");
  CHECK_THROWS_CONTAINING(load(with_array("val", std::vector<float>(7, 1.0f))), src, "val",
                          "expected F64");
  CHECK_THROWS_CONTAINING(
      load(with_array("val", std::vector<double>{1, 2, 3, std::nan(""), 5, 6, 7})), src,
      "val[3] is not finite");
  SafetensorsFile missing = f;
  missing.arrays.erase(missing.arrays.begin() + 1);
  CHECK_THROWS_CONTAINING(load(serialize_safetensors(missing)), src, "missing array 'col_idx'");

  // A COO container may claim any row count; one whose CSR cannot exist is a clear error.
  SafetensorsFile huge = matrix_to_safetensors(Csr64{0, 0, {0}, {}, {}}, Layout::coo);
  huge.metadata["rows"] = std::to_string(std::int64_t{1} << 62);
  CHECK_THROWS_CONTAINING(load(serialize_safetensors(huge)), src, "GiB of memory");

  // Unsorted or repeated columns in a row are accepted, sorted and summed.
  std::int64_t dups = 0;
  auto messy = with_array("col_idx", std::vector<std::int32_t>{3, 0, 0, 0, 0, 1, 3});
  Csr64 m = matrix_from_safetensors(parse_safetensors(messy, src), src, &dups);
  CHECK(dups == 1);
  CHECK(m.row_ptr == std::vector<std::int64_t>{0, 2, 3, 3, 6});
  CHECK(m.col_idx == std::vector<std::int64_t>{0, 3, 0, 0, 1, 3});
  CHECK(m.val[2] == a.val[2] + a.val[3]);
}

TEST_CASE("truncated container files are refused, not misread", "[io][container]") {
  iotest::TempDir dir;
  write_matrix(dir.file("m.safetensors"), sample());
  const std::string bytes = iotest::read_bytes(dir.file("m.safetensors"));
  for (std::size_t cut : {std::size_t{3}, std::size_t{12}, bytes.size() / 2, bytes.size() - 1}) {
    INFO("cut at " << cut);
    iotest::write_text(dir.file("cut.safetensors"), bytes.substr(0, cut));
    CHECK_THROWS_CONTAINING(read_matrix(dir.file("cut.safetensors")), "cut.safetensors",
                            "safetensors: ");
  }
}
