// The small hand-written files in tests/data (also the fuzzers' seeds) read as worked out by hand.
#include "core/convert.hpp"
#include "io/matrix_file.hpp"
#include "io/matrix_market.hpp"
#include "io/tns.hpp"
#include "test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::io;

namespace {
std::string data(const std::string& name) {
  return std::string(SPARSETUNE_TEST_DATA_DIR) + "/" + name;
}
}  // namespace

TEST_CASE("tests/data matrices", "[io][data]") {
  iotest::check_csr(read_matrix(data("general_real.mtx")), 3, 4, {0, 2, 3, 5}, {0, 2, 1, 0, 1},
                    {1.5, 0, -0.002, 425, -0.5});
  iotest::check_csr(read_matrix(data("general_real.safetensors")), 3, 4, {0, 2, 3, 5},
                    {0, 2, 1, 0, 1}, {1.5, 0, -0.002, 425, -0.5});
  const Csr64 sym = read_matrix(data("symmetric_real.mtx"));
  iotest::check_csr(sym, 3, 3, {0, 2, 5, 7}, {0, 1, 0, 1, 2, 1, 2}, {4, 1, 1, 5, 2, 2, 6});
  CHECK(same_matrix(sym, read_matrix(data("symmetric_real.mtx.gz"))));
  CHECK(same_matrix(sym, read_matrix(data("symmetric_coo.safetensors"))));
  iotest::check_csr(read_matrix(data("skew_integer.mtx")), 3, 3, {0, 2, 4, 6}, {1, 2, 0, 2, 0, 1},
                    {-3, 1, 3, -4, -1, 4});
  iotest::check_csr(read_matrix(data("pattern_symmetric.mtx")), 4, 4, {0, 1, 3, 5, 7},
                    {1, 0, 2, 1, 3, 2, 3}, {1, 1, 1, 1, 1, 1, 1});
  iotest::check_csr(read_matrix(data("array_general.mtx")), 2, 3, {0, 3, 6}, {0, 1, 2, 0, 1, 2},
                    {1, 3, 5, 2, 4, 6});
  iotest::check_csr(read_matrix(data("hermitian_crlf.mtx")), 2, 2, {0, 2, 3}, {0, 1, 0},
                    {2, -1, -1});
}

TEST_CASE("tests/data tensors", "[io][data]") {
  auto t = read_tns(data("order3.tns"));
  CHECK(t.dims == std::vector<std::int64_t>{3, 3, 3});
  CHECK(t.idx[0] == std::vector<std::int64_t>{0, 0, 1, 2});
  CHECK(t.idx[1] == std::vector<std::int64_t>{0, 1, 0, 2});
  CHECK(t.idx[2] == std::vector<std::int64_t>{0, 2, 1, 0});
  CHECK(t.val == std::vector<double>{1.0, -2.5, 0.125, 0.04});
  TnsInfo info;
  auto h = read_tns(data("order4_header.tns"), &info);
  CHECK(info.header);
  CHECK(h.dims == std::vector<std::int64_t>{3, 3, 3, 5});
  CHECK(h.nnz() == 3);
  CHECK(h.val == std::vector<double>{1, 2, -1});
}
