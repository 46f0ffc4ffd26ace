// Matrix Market reading: every field x symmetry case against CSR results worked out by hand,
// the dense array format, lenient whitespace, gzip, duplicates, and every error naming the file
// and the right line.
#include "io/matrix_market.hpp"

#include <cmath>

#include "core/convert.hpp"
#include "core/memory.hpp"
#include "io/file_bytes.hpp"
#include "io/matrix_file.hpp"
#include "test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::io;

namespace {
const std::string kSrc = "t.mtx";

Csr64 parse_csr(const std::string& text, MtxInfo* info = nullptr, std::int64_t* dups = nullptr,
                const MtxParseOptions& opt = {}) {
  Coo64 c = parse_matrix_market(text, kSrc, info, opt);
  return coo_to_csr<std::int64_t, std::int64_t>(c, dups);
}

// Expects the gzip-compressed text to fail the same way.
void check_gz_error(const std::string& text, std::int64_t line, const std::string& what,
                    const MtxParseOptions& opt) {
  INFO("gzip input:\n" << text);
  try {
    parse_matrix_market_bytes(gzip(text), kSrc, nullptr, opt);
    FAIL("no error raised");
  } catch (const InputError& e) {
    INFO("message: " << e.what());
    CHECK(e.line() == line);
    CHECK(std::string(e.what()).find(what) != std::string::npos);
  }
}

// Expects parse_matrix_market to fail at `line` with a message containing `what`.
void check_error(const std::string& text, std::int64_t line, const std::string& what,
                 const MtxParseOptions& opt = {}) {
  INFO("input:\n" << text);
  try {
    parse_matrix_market(text, kSrc, nullptr, opt);
    FAIL("no error raised");
  } catch (const InputError& e) {
    CHECK(e.file() == kSrc);
    CHECK(e.line() == line);
    INFO("message: " << e.what());
    CHECK(std::string(e.what()).find(kSrc + ":" + std::to_string(line) + ": ") == 0);
    CHECK(std::string(e.what()).find(what) != std::string::npos);
  }
}
}  // namespace

TEST_CASE("real general: entries sorted into CSR, explicit zeros kept", "[io][mtx]") {
  MtxInfo info;
  auto a = parse_csr(
      "%%MatrixMarket matrix coordinate real general\n"
      "% a comment\n"
      "3 4 4\n"
      "1 1 1.5\n"
      "3 4 -2e-3\n"
      "2 2 7\n"
      "1 3 0\n",
      &info);
  iotest::check_csr(a, 3, 4, {0, 2, 3, 4}, {0, 2, 1, 3}, {1.5, 0.0, 7.0, -0.002});
  CHECK(info.coordinate);
  CHECK(info.field == Field::real);
  CHECK(info.symmetry == Symmetry::general);
  CHECK(info.stored_entries == 4);
  CHECK(info.expanded_entries == 4);
}

TEST_CASE("real symmetric: mirrored without doubling the diagonal, upper entries accepted",
          "[io][mtx]") {
  MtxInfo info;
  // Lower triangle plus one entry given in the upper triangle (1,3), mirrored like the others.
  auto a = parse_csr(
      "%%MatrixMarket matrix coordinate real symmetric\n"
      "3 3 5\n"
      "1 1 2\n"
      "2 1 3\n"
      "3 2 4\n"
      "3 3 5\n"
      "1 3 6\n",
      &info);
  iotest::check_csr(a, 3, 3, {0, 3, 5, 8}, {0, 1, 2, 0, 2, 0, 1, 2}, {2, 3, 6, 3, 4, 6, 4, 5});
  CHECK(info.stored_entries == 5);
  CHECK(info.expanded_entries == 8);  // 2 * 5 - 2 diagonal
}

TEST_CASE("skew-symmetric: mirror negated, zero diagonal entry kept", "[io][mtx]") {
  MtxInfo info;
  auto a = parse_csr(
      "%%MatrixMarket matrix coordinate real skew-symmetric\n"
      "3 3 4\n"
      "2 1 3\n"
      "3 1 -1\n"
      "3 2 4\n"
      "1 1 0\n",
      &info);
  iotest::check_csr(a, 3, 3, {0, 3, 5, 7}, {0, 1, 2, 0, 2, 0, 1}, {0, -3, 1, 3, -4, -1, 4});
  CHECK(info.symmetry == Symmetry::skew_symmetric);
  CHECK(info.expanded_entries == 7);
}

TEST_CASE("hermitian with a real field reads like symmetric", "[io][mtx]") {
  auto a = parse_csr(
      "%%MatrixMarket matrix coordinate real hermitian\n"
      "2 2 2\n"
      "2 1 -1.25\n"
      "2 2 4\n");
  iotest::check_csr(a, 2, 2, {0, 1, 3}, {1, 0, 1}, {-1.25, -1.25, 4});
}

TEST_CASE("pattern entries are 1, general and symmetric", "[io][mtx]") {
  MtxInfo info;
  auto g = parse_csr(
      "%%MatrixMarket matrix coordinate pattern general\n"
      "2 3 3\n"
      "1 3\n"
      "2 1\n"
      "1 1\n",
      &info);
  iotest::check_csr(g, 2, 3, {0, 2, 3}, {0, 2, 0}, {1, 1, 1});
  CHECK(info.field == Field::pattern);
  auto s = parse_csr(
      "%%MatrixMarket matrix coordinate pattern symmetric\n"
      "3 3 3\n"
      "2 1\n"
      "3 3\n"
      "3 1\n");
  iotest::check_csr(s, 3, 3, {0, 2, 3, 5}, {1, 2, 0, 0, 2}, {1, 1, 1, 1, 1});
}

TEST_CASE("integer field, general and symmetric; 'double' is read as real", "[io][mtx]") {
  MtxInfo info;
  auto g = parse_csr(
      "%%MatrixMarket matrix coordinate integer general\n"
      "2 2 2\n"
      "1 2 -7\n"
      "2 1 +12\n",
      &info);
  iotest::check_csr(g, 2, 2, {0, 1, 2}, {1, 0}, {-7, 12});
  CHECK(info.field == Field::integer);
  auto s = parse_csr(
      "%%MatrixMarket matrix coordinate integer symmetric\n"
      "2 2 2\n"
      "1 1 3\n"
      "2 1 5\n");
  iotest::check_csr(s, 2, 2, {0, 2, 3}, {0, 1, 0}, {3, 5, 5});
  auto d = parse_csr(
      "%%MatrixMarket matrix coordinate double general\n"
      "1 1 1\n"
      "1 1 0.5\n",
      &info);
  CHECK(info.field == Field::real);
  iotest::check_csr(d, 1, 1, {0, 1}, {0}, {0.5});
}

TEST_CASE("banner keywords are case-insensitive", "[io][mtx]") {
  MtxInfo info;
  auto a = parse_csr(
      "%%matrixmarket MATRIX Coordinate REAL Symmetric\n"
      "2 2 1\n"
      "2 1 9\n",
      &info);
  iotest::check_csr(a, 2, 2, {0, 1, 2}, {1, 0}, {9, 9});
  CHECK(info.symmetry == Symmetry::symmetric);
}

TEST_CASE("array format: column-major, symmetric lower triangle, skew strictly lower",
          "[io][mtx]") {
  MtxInfo info;
  // [[1 3 5], [2 0 6]]: the zero of a dense array is kept as an entry.
  auto g = parse_csr(
      "%%MatrixMarket matrix array real general\n"
      "% comment\n"
      "2 3\n"
      "1\n2\n3\n0\n5\n6\n",
      &info);
  iotest::check_csr(g, 2, 3, {0, 3, 6}, {0, 1, 2, 0, 1, 2}, {1, 3, 5, 2, 0, 6});
  CHECK_FALSE(info.coordinate);
  CHECK(info.stored_entries == 6);
  // Lower triangle a11 a21 a31 a22 a32 a33 = 1..6.
  auto s = parse_csr(
      "%%MatrixMarket matrix array real symmetric\n"
      "3 3\n"
      "1\n2\n3\n4\n5\n6\n",
      &info);
  iotest::check_csr(s, 3, 3, {0, 3, 6, 9}, {0, 1, 2, 0, 1, 2, 0, 1, 2},
                    {1, 2, 3, 2, 4, 5, 3, 5, 6});
  CHECK(info.stored_entries == 6);
  CHECK(info.expanded_entries == 9);
  // Strictly lower a21 a31 a32 = 1 2 3; the diagonal is not stored.
  auto k = parse_csr(
      "%%MatrixMarket matrix array real skew-symmetric\n"
      "3 3\n"
      "1\n2\n3\n",
      &info);
  iotest::check_csr(k, 3, 3, {0, 2, 4, 6}, {1, 2, 0, 2, 0, 1}, {-1, -2, 1, -3, 2, 3});
  auto i = parse_csr(
      "%%MatrixMarket matrix array integer general\n"
      "1 2\n"
      "4\n-5\n");
  iotest::check_csr(i, 1, 2, {0, 2}, {0, 1}, {4, -5});
}

TEST_CASE("CRLF, blank lines, tabs, surrounding spaces and number spellings", "[io][mtx]") {
  auto a = parse_csr(
      "%%MatrixMarket matrix coordinate real general  \r\n"
      "\r\n"
      "% comment\r\n"
      "   \t\r\n"
      "  2 3\t 6  \r\n"
      "1 1 1e-3\r\n"
      "\r\n"
      "1 2 1.5E+10\r\n"
      "\t2 1\t-.5 \r\n"
      "2 2 +2\r\n"
      "% a comment between entries\r\n"
      "2 3 -0\r\n"
      "1 3 7.\r\n"
      "\r\n");
  iotest::check_csr(a, 2, 3, {0, 3, 6}, {0, 1, 2, 0, 1, 2}, {1e-3, 1.5e10, 7, -0.5, 2, 0});
  // No newline after the last entry.
  auto b = parse_csr("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 4.25");
  iotest::check_csr(b, 1, 1, {0, 1}, {0}, {4.25});
}

TEST_CASE("duplicates are summed and counted; read_matrix reports them", "[io][mtx]") {
  std::int64_t dups = -1;
  auto a = parse_csr(
      "%%MatrixMarket matrix coordinate real general\n"
      "2 2 4\n"
      "1 1 1\n"
      "2 2 5\n"
      "1 1 2.5\n"
      "1 1 -0.5\n",
      nullptr, &dups);
  CHECK(dups == 2);
  iotest::check_csr(a, 2, 2, {0, 1, 2}, {0, 1}, {3, 5});
  MtxInfo direct;
  iotest::check_csr(parse_matrix_market_csr("%%MatrixMarket matrix coordinate real general\n2 2 4\n"
                                            "1 1 1\n2 2 5\n1 1 2.5\n1 1 -0.5\n",
                                            kSrc, &direct),
                    2, 2, {0, 1, 2}, {0, 1}, {3, 5});
  CHECK(direct.duplicates == 2);
  CHECK(direct.expanded_entries == 4);
  // In a symmetric file, (2,1) and (1,2) describe the same pair of entries: both are summed.
  iotest::TempDir dir;
  const std::string path = dir.file("d.mtx");
  iotest::write_text(path,
                     "%%MatrixMarket matrix coordinate real symmetric\n"
                     "2 2 2\n"
                     "2 1 1\n"
                     "1 2 2\n");
  MtxInfo info;
  auto s = read_matrix(path, &info);
  iotest::check_csr(s, 2, 2, {0, 1, 2}, {1, 0}, {3, 3});
  CHECK(info.duplicates == 2);
  CHECK(info.expanded_entries == 4);
}

TEST_CASE("gzip is detected by content, not by name", "[io][mtx]") {
  iotest::TempDir dir;
  const std::string text =
      "%%MatrixMarket matrix coordinate real general\n"
      "2 2 2\n"
      "1 2 3\n"
      "2 1 4\n";
  const std::string gz = gzip(text);
  REQUIRE(is_gzip(gz));
  iotest::write_text(dir.file("a.mtx.gz"), gz);
  iotest::write_text(dir.file("b.mtx"), gz);       // compressed, named plain
  iotest::write_text(dir.file("c.mtx.gz"), text);  // plain, named compressed
  iotest::write_text(dir.file("d.mtx.gz"), gz + gz.substr(0, 0) + gzip(""));  // two members
  for (const char* name : {"a.mtx.gz", "b.mtx", "c.mtx.gz", "d.mtx.gz"}) {
    INFO(name);
    iotest::check_csr(read_matrix(dir.file(name)), 2, 2, {0, 1, 2}, {1, 0}, {3, 4});
  }
  // A header longer than the first decompressed block (many comments, then one long comment
  // without a break for 200 kB) is found across blocks.
  std::string long_header = "%%MatrixMarket matrix coordinate real general\n";
  for (int k = 0; k < 5000; ++k) long_header += "% comment line " + std::to_string(k) + "\n";
  long_header += "%" + std::string(200000, 'x') + "\n  \n2 2 1\n2 2 -1.5\n";
  MtxInfo long_info;
  iotest::check_csr(coo_to_csr<std::int64_t, std::int64_t>(
                        parse_matrix_market_bytes(gzip(long_header), kSrc, &long_info)),
                    2, 2, {0, 0, 1}, {1}, {-1.5});
  CHECK(long_info.stored_entries == 1);
  CHECK_THROWS_CONTAINING(parse_matrix_market_bytes(gzip(long_header + "1 1 1\n"), kSrc),
                          "t.mtx:5006:", "more entries than the 1 declared on line 5004");

  // Short gzip files take the whole-text path: a header-only file with no final newline, an
  // array, and an error on the banner.
  const MtxParseOptions tiny{2, 1};
  CHECK(parse_matrix_market_bytes(gzip("%%MatrixMarket matrix coordinate real general\n2 3 0"),
                                  kSrc, nullptr, tiny)
            .nnz() == 0);
  CHECK(parse_matrix_market_bytes(gzip("%%MatrixMarket matrix array real general\n1 2\n3\n4\n"),
                                  kSrc, nullptr, tiny)
            .val == std::vector<double>{3, 4});
  CHECK_THROWS_CONTAINING(
      parse_matrix_market_bytes(gzip("%%MatrixMarket matrix coordinate complex general\n1 1 0\n"),
                                kSrc, nullptr, tiny),
      "t.mtx:1:", "complex");
  CHECK_THROWS_CONTAINING(parse_matrix_market_bytes(gzip(""), kSrc, nullptr, tiny),
                          "t.mtx:1:", "empty file");
  CHECK_THROWS_CONTAINING(parse_matrix_market_bytes(gzip(text).substr(0, 30), kSrc, nullptr, tiny),
                          "t.mtx", "truncated");
  iotest::write_text(dir.file("t.mtx.gz"), gz.substr(0, gz.size() / 2));
  CHECK_THROWS_CONTAINING(read_matrix(dir.file("t.mtx.gz")), dir.file("t.mtx.gz"), "truncated");
  CHECK_THROWS_CONTAINING(read_matrix(dir.file("missing.mtx")), "missing.mtx", "cannot open");
}

TEST_CASE("chunked parallel parsing matches the sequential result and keeps line numbers",
          "[io][mtx]") {
  // 300 entries with comments and blank lines sprinkled in, parsed with tiny chunks.
  std::string text = "%%MatrixMarket matrix coordinate real symmetric\n% header\n40 40 300\n";
  std::vector<std::int64_t> line_of_entry;
  std::int64_t line = 3;
  for (int k = 0; k < 300; ++k) {
    if (k % 7 == 0) {
      text += "% note\n";
      ++line;
    }
    if (k % 11 == 0) {
      text += "\n";
      ++line;
    }
    const int i = k % 40 + 1, j = (k * 7) % 40 + 1;
    text += std::to_string(std::max(i, j)) + " " + std::to_string(std::min(i, j)) + " " +
            std::to_string(k * 0.25 - 3) + "\n";
    line_of_entry.push_back(++line);
  }
  MtxParseOptions tiny{3, 16};
  std::int64_t d1 = 0, d2 = 0;
  auto seq = parse_csr(text, nullptr, &d1, MtxParseOptions{1, 1u << 20});
  auto par = parse_csr(text, nullptr, &d2, tiny);
  CHECK(same_matrix(seq, par));
  CHECK(d1 == d2);
  // The direct CSR path gives the same matrix and duplicate count, plain or gzip.
  for (const std::string& bytes : {text, gzip(text)}) {
    MtxInfo info;
    CHECK(same_matrix(seq, parse_matrix_market_csr(bytes, kSrc, &info, tiny)));
    CHECK(info.duplicates == d1);
    CHECK(info.expanded_entries == seq.nnz() + d1);
    CHECK(same_matrix(seq, parse_matrix_market_csr(bytes, kSrc, nullptr)));
  }

  // An error deep inside: the reported line must be the file's line, whatever the chunking.
  for (int bad : {0, 137, 299}) {
    std::string broken = text;
    const std::string needle = "\n";
    // Replace the value of entry `bad` by a word.
    std::size_t pos = 0;
    for (std::int64_t l = 1; l < line_of_entry[bad]; ++l) pos = broken.find(needle, pos) + 1;
    const std::size_t eol = broken.find('\n', pos);
    const std::size_t last_space = broken.rfind(' ', eol);
    broken.replace(last_space + 1, eol - last_space - 1, "oops");
    check_error(broken, line_of_entry[bad], "value 'oops' is not a number", tiny);
    check_gz_error(broken, line_of_entry[bad], "value 'oops' is not a number", tiny);
    check_error(broken, line_of_entry[bad], "value 'oops' is not a number",
                MtxParseOptions{1, 1u << 20});
  }
  // One entry too many: the error points at the surplus entry line.
  std::string extra = text;
  extra.replace(extra.find("40 40 300"), 9, "40 40 250");
  check_error(extra, line_of_entry[250], "more entries than the 250 declared on line 3", tiny);
  check_gz_error(extra, line_of_entry[250], "more entries than the 250 declared on line 3", tiny);
  std::string fewer = text;
  fewer.replace(fewer.find("40 40 300"), 9, "40 40 301");
  check_gz_error(fewer, 3, "declares 301 entries but the file has only 300", tiny);

  // Gzip input is decompressed while it is parsed, in blocks cut at line ends.
  for (std::size_t chunk : {std::size_t{1}, std::size_t{16}, std::size_t{1} << 20}) {
    INFO("chunk " << chunk);
    MtxInfo info;
    const Coo64 z = parse_matrix_market_bytes(gzip(text), kSrc, &info, MtxParseOptions{2, chunk});
    CHECK(same_matrix(seq, coo_to_csr<std::int64_t, std::int64_t>(z)));
    CHECK(info.stored_entries == 300);
    CHECK(info.expanded_entries == z.nnz());
  }
}

TEST_CASE("banner and size line errors name the file and line", "[io][mtx]") {
  check_error("", 1, "empty file");
  check_error("3 3 1\n1 1 1\n", 1, "not a Matrix Market file");
  check_error("%%MatrixMarket matrix coordinate real\n1 1 0\n", 1, "bad banner");
  check_error("%%MatrixMarket vector coordinate real general\n1 1 0\n", 1, "unsupported object");
  check_error("%%MatrixMarket matrix sparse real general\n1 1 0\n", 1, "unknown format 'sparse'");
  check_error("%%MatrixMarket matrix coordinate quaternion general\n1 1 0\n", 1,
              "unknown field 'quaternion'");
  check_error("%%MatrixMarket matrix coordinate real diagonal\n1 1 0\n", 1,
              "unknown symmetry 'diagonal'");
  check_error("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", 1,
              "complex matrices are not supported");
  check_error("%%MatrixMarket matrix array pattern general\n1 1\n", 1, "pattern");
  check_error("%%MatrixMarket matrix coordinate pattern skew-symmetric\n1 1 0\n", 1,
              "skew-symmetric");
  const std::string b = "%%MatrixMarket matrix coordinate real general\n";
  check_error(b + "% only comments\n\n", 4, "missing size line");
  check_error(b + "% c\n3 3\n", 3, "size line must be 'rows columns entries'");
  check_error(b + "3 3 1 1\n", 2, "size line must be");
  check_error(b + "3 x 1\n", 2, "column count 'x' is not an integer");
  check_error(b + "3 3.5 1\n", 2, "column count '3.5' is not an integer");
  check_error(b + "-3 3 1\n", 2, "row count is negative");
  check_error(b + "3 3 -1\n", 2, "entry count is negative");
  check_error(b + "99999999999999999999 3 1\n", 2, "row count '99999999999999999999' overflows");
  check_error(b + "3 3 99999999999999999999\n", 2, "entry count");
  check_error("%%MatrixMarket matrix coordinate real symmetric\n3 4 0\n", 2, "must be square");
  check_error("%%MatrixMarket matrix array real general\n3 3 9\n", 2,
              "size line must be 'rows columns'");
  check_error("%%MatrixMarket matrix array real general\n4294967296 4294967296\n", 2,
              "more than 2^63");
}

TEST_CASE("entry errors name the file and the line of the entry", "[io][mtx]") {
  const std::string h = "%%MatrixMarket matrix coordinate real general\n% c\n3 4 2\n1 1 1\n";
  check_error(h, 3, "declares 2 entries but the file has only 1");
  check_error(h + "1 1 1\n1 2 3\n", 6, "more entries than the 2 declared on line 3");
  check_error(h + "4 1 1\n", 5, "row index 4 exceeds the 3 rows");
  check_error(h + "1 5 1\n", 5, "column index 5 exceeds the 4 columns");
  check_error(h + "0 1 1\n", 5, "row index 0 is below 1");
  check_error(h + "1 0 1\n", 5, "column index 0 is below 1");
  check_error(h + "-1 1 1\n", 5, "row index -1 is below 1");
  check_error(h + "1 x 1\n", 5, "column index 'x' is not an integer");
  check_error(h + "1.0 1 1\n", 5, "row index '1.0' is not an integer");
  check_error(h + "1 1 abc\n", 5, "value 'abc' is not a number");
  check_error(h + "1 1 1.5.3\n", 5, "value '1.5.3' is not a number");
  check_error(h + "1 1 1,5\n", 5, "value '1,5' is not a number");
  // A control byte in the token is written out, not left to cut the message short.
  check_error(h + std::string("1 1 1\0x\n", 8), 5, "value '1\\x00x' is not a number");
  check_error(h + "1 1 nan\n", 5, "value 'nan' is not finite");
  check_error(h + "1 1 -Inf\n", 5, "value '-Inf' is not finite");
  check_error(h + "1 1 1e400\n", 5, "value '1e400' is not finite");
  check_error(h + "1 1\n", 5, "expected 3 values (row column value)");
  check_error(h + "1\n", 5, "expected 3 values");
  check_error(h + "1 1 1 1\n", 5, "found more");
  check_error(h + "99999999999999999999 1 1\n", 5, "row index '99999999999999999999' overflows");
  check_error("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1\n", 3,
              "expected 2 values on the line, found more");
  check_error("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n", 3,
              "value '1.5' is not an integer");
  check_error("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 2 1\n", 3,
              "skew-symmetric matrix must be zero");
  check_error("%%MatrixMarket matrix array real general\n2 1\n1\n2\n3\n", 5,
              "more entries than the 2");
  check_error("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", 2,
              "implies 4 entries but the file has only 3");
  check_error("%%MatrixMarket matrix array real general\n2 1\n1 2\n2\n", 3, "one value per line");
  check_error("%%MatrixMarket matrix array real general\n2 1\n1\ninf\n", 4, "not finite");
}

TEST_CASE("read_matrix_market names the file; containers are not Matrix Market", "[io][mtx]") {
  iotest::TempDir dir;
  const std::string path = dir.file("bad.mtx");
  iotest::write_text(path, "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n");
  CHECK_THROWS_CONTAINING(read_matrix_market(path), path + ":3:", "row index 3 exceeds");
  CHECK_THROWS_CONTAINING(read_matrix(path), path + ":3:", "row index 3 exceeds");
  // Valid, but a CSR of 2^62 rows cannot exist: a clear error, not a crash.
  iotest::write_text(dir.file("huge.mtx"),
                     "%%MatrixMarket matrix coordinate real general\n4611686018427387904 1 0\n");
  CHECK(read_matrix_market(dir.file("huge.mtx")).rows == std::int64_t{1} << 62);
  CHECK_THROWS_CONTAINING(read_matrix(dir.file("huge.mtx")), "huge.mtx:2:", "GiB of memory");
  // 2e9 rows: 30 GiB of row pointers, which an overcommitting kernel would grant and then kill
  // the process for; the size line is refused before anything is allocated.
  iotest::write_text(dir.file("big.mtx"),
                     "%%MatrixMarket matrix coordinate real general\n2000000000 2 1\n1 1 1\n");
  if (physical_memory_bytes() < 16.0 * 2e9)
    CHECK_THROWS_CONTAINING(read_matrix(dir.file("big.mtx")), "big.mtx:2:", "GiB of memory");
  iotest::write_text(dir.file("x.tns"), "1 1 1 1.0\n");
  CHECK_THROWS_CONTAINING(read_matrix(dir.file("x.tns")), "x.tns", "tensor");
}

TEST_CASE("every field x symmetry combination of one small file", "[io][mtx]") {
  // Entries (2,1) = 2, (3,2) = -5 and an explicit diagonal zero (1,1); pattern files give 1s.
  struct Case {
    const char* field;
    const char* symmetry;
    std::vector<std::int64_t> row_ptr, col_idx;
    std::vector<double> val;
  };
  const std::vector<Case> cases = {
      {"real", "general", {0, 1, 2, 3}, {0, 0, 1}, {0, 2, -5}},
      {"real", "symmetric", {0, 2, 4, 5}, {0, 1, 0, 2, 1}, {0, 2, 2, -5, -5}},
      {"real", "hermitian", {0, 2, 4, 5}, {0, 1, 0, 2, 1}, {0, 2, 2, -5, -5}},
      {"real", "skew-symmetric", {0, 2, 4, 5}, {0, 1, 0, 2, 1}, {0, -2, 2, 5, -5}},
      {"integer", "general", {0, 1, 2, 3}, {0, 0, 1}, {0, 2, -5}},
      {"integer", "symmetric", {0, 2, 4, 5}, {0, 1, 0, 2, 1}, {0, 2, 2, -5, -5}},
      {"integer", "hermitian", {0, 2, 4, 5}, {0, 1, 0, 2, 1}, {0, 2, 2, -5, -5}},
      {"integer", "skew-symmetric", {0, 2, 4, 5}, {0, 1, 0, 2, 1}, {0, -2, 2, 5, -5}},
      {"pattern", "general", {0, 1, 2, 3}, {0, 0, 1}, {1, 1, 1}},
      {"pattern", "symmetric", {0, 2, 4, 5}, {0, 1, 0, 2, 1}, {1, 1, 1, 1, 1}},
      {"pattern", "hermitian", {0, 2, 4, 5}, {0, 1, 0, 2, 1}, {1, 1, 1, 1, 1}},
  };
  for (const auto& c : cases) {
    INFO(c.field << " " << c.symmetry);
    const bool pattern = std::string(c.field) == "pattern";
    const std::string text = std::string("%%MatrixMarket matrix coordinate ") + c.field + " " +
                             c.symmetry + "\n3 3 3\n" +
                             (pattern ? "2 1\n3 2\n1 1\n" : "2 1 2\n3 2 -5\n1 1 0\n");
    MtxInfo info;
    iotest::check_csr(parse_csr(text, &info), 3, 3, c.row_ptr, c.col_idx, c.val);
    iotest::check_csr(parse_matrix_market_csr(text, kSrc), 3, 3, c.row_ptr, c.col_idx, c.val);
    CHECK(to_string(info.field) == c.field);
    CHECK(to_string(info.symmetry) == c.symmetry);
    CHECK(info.stored_entries == 3);
    CHECK(info.expanded_entries == static_cast<std::int64_t>(c.val.size()));
  }
  check_error("%%MatrixMarket matrix coordinate pattern skew-symmetric\n3 3 1\n2 1\n", 1,
              "pattern matrix cannot be skew-symmetric");
}
