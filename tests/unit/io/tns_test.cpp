// FROSTT .tns reading and writing: headers, inferred dimensions, orders 3 to 5, duplicates, and
// errors naming the file and line.
#include "io/tns.hpp"

#include "core/error.hpp"
#include "io/file_bytes.hpp"
#include "test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::io;

namespace {
const std::string kSrc = "t.tns";

void check_error(const std::string& text, std::int64_t line, const std::string& what) {
  INFO("input:\n" << text);
  try {
    parse_tns(text, kSrc);
    FAIL("no error raised");
  } catch (const InputError& e) {
    INFO("message: " << e.what());
    CHECK(e.file() == kSrc);
    CHECK(e.line() == line);
    CHECK(std::string(e.what()).find(what) != std::string::npos);
  }
}
}  // namespace

TEST_CASE("order-3 tensor without header: dims are the largest index per mode", "[io][tns]") {
  TnsInfo info;
  auto t = parse_tns(
      "# a comment\n"
      "\n"
      "2 1 3 1.5\n"
      "1 4 1 -2e-3\r\n"
      "  1 1 1\t+7 \n"
      "# trailing comment",
      kSrc, &info);
  CHECK_FALSE(info.header);
  CHECK(info.stored_entries == 3);
  CHECK(t.dims == std::vector<std::int64_t>{2, 4, 3});
  // Sorted lexicographically, 0-based.
  CHECK(t.idx[0] == std::vector<std::int64_t>{0, 0, 1});
  CHECK(t.idx[1] == std::vector<std::int64_t>{0, 3, 0});
  CHECK(t.idx[2] == std::vector<std::int64_t>{0, 0, 2});
  CHECK(t.val == std::vector<double>{7, -0.002, 1.5});
}

TEST_CASE("ParTI-style header gives order and dimensions", "[io][tns]") {
  TnsInfo info;
  auto t = parse_tns(
      "# header below\n"
      "4\n"
      "5 6 7 8\n"
      "1 2 3 4 1.0\n"
      "5 6 7 8 2.0\n",
      kSrc, &info);
  CHECK(info.header);
  CHECK(t.order() == 4);
  CHECK(t.dims == std::vector<std::int64_t>{5, 6, 7, 8});
  CHECK(t.nnz() == 2);
  CHECK(t.idx[3] == std::vector<std::int64_t>{3, 7});
  // A header and no entries is an empty tensor of known shape.
  auto e = parse_tns("3\n2 2 2\n", kSrc);
  CHECK(e.nnz() == 0);
  CHECK(e.dims == std::vector<std::int64_t>{2, 2, 2});
}

TEST_CASE("order 5 and duplicate summing", "[io][tns]") {
  TnsInfo info;
  auto t = parse_tns(
      "1 2 3 4 5 1\n"
      "1 1 1 1 1 2\n"
      "1 2 3 4 5 0.5\n"
      "1 2 3 4 5 0.25\n",
      kSrc, &info);
  CHECK(t.order() == 5);
  CHECK(info.stored_entries == 4);
  CHECK(info.duplicates == 2);
  CHECK(t.nnz() == 2);
  CHECK(t.val == std::vector<double>{2, 1.75});
  CHECK(t.dims == std::vector<std::int64_t>{1, 2, 3, 4, 5});
}

TEST_CASE("tns write and read back, with and without header, plain and gzip", "[io][tns]") {
  iotest::TempDir dir;
  SparseTensor t;
  t.dims = {3, 9, 2};  // larger than the largest index in mode 1
  t.idx = {{0, 2, 2}, {1, 0, 4}, {1, 1, 0}};
  t.val = {0.1, -1e-300, 3};
  write_tns(dir.file("a.tns"), t);
  write_tns(dir.file("a.tns.gz"), t);
  write_tns(dir.file("n.tns"), t, false);
  CHECK(is_gzip(iotest::read_bytes(dir.file("a.tns.gz"))));
  CHECK(iotest::read_bytes(dir.file("n.tns")).rfind("1 2 2 0.10000000000000001\n", 0) == 0);
  for (const char* name : {"a.tns", "a.tns.gz"}) {
    INFO(name);
    auto u = read_tns(dir.file(name));
    CHECK(u.dims == t.dims);
    CHECK(u.idx == t.idx);
    CHECK(u.val == t.val);
  }
  auto n = read_tns(dir.file("n.tns"));
  CHECK(n.dims == std::vector<std::int64_t>{3, 5, 2});  // inferred without the header
  CHECK(n.val == t.val);
  CHECK(iotest::count_entries(dir.path) == 3);
  CHECK_THROWS_CONTAINING(read_tns(dir.file("none.tns")), "none.tns", "cannot open");
}

TEST_CASE("tns errors name the file and the line", "[io][tns]") {
  check_error("", 0, "no entries");
  check_error("# only a comment\n\n", 2, "no entries");
  check_error("1 2 3.5\n", 1, "order-2 tensor");
  check_error("1 3.5\n", 1, "order-1 tensor");
  check_error("# c\n2\n3 3\n1 1 1\n", 2, "order-2 tensor");
  check_error("3\n", 1, "followed by the dimensions");
  check_error("3\n4 4\n", 2, "order 3 but this line has 2 dimensions");
  check_error("3\n4 0 4\n", 2, "dimension 0 is below 1");
  check_error("3\n4 x 4\n", 2, "dimension 'x' is not an integer");
  check_error("x\n1 1 1\n", 1, "order 'x' is not an integer");
  check_error("100\n", 1, "exceeds the supported maximum");
  check_error("3\n2 2 2\n1 1 3 1.0\n", 3, "index 3 of mode 3 exceeds the declared dimension 2");
  check_error("1 1 1 1\n1 1 1\n", 2, "expected 4 values (3 indices and a value), found 3");
  check_error("1 1 1 1\n1 1 1 1 1\n", 2, "found 5");
  check_error("1 1 1 1\n\n1 0 1 1\n", 3, "index 0 of mode 2 is below 1");
  check_error("1 1 1 1\n1 -4 1 1\n", 2, "index -4 of mode 2 is below 1");
  check_error("1 1 1 1\n1 a 1 1\n", 2, "index 'a' of mode 2 is not an integer");
  check_error("1 1 1 1\n1 1.5 1 1\n", 2, "index '1.5' of mode 2 is not an integer");
  check_error("1 1 1 1\n1 1 1 nan\n", 2, "value 'nan' is not finite");
  check_error("1 1 1 1\n1 1 1 inf\n", 2, "value 'inf' is not finite");
  check_error("1 1 1 1\n1 1 1 1e999\n", 2, "not finite");
  check_error("1 1 1 1\n1 1 1 x\n", 2, "value 'x' is not a number");
  check_error("1 1 1 1\n99999999999999999999 1 1 1\n", 2, "overflows int64");
}
