// Matrices as Slice-GCN's training slices: a matrix file is the one slice of an (rows, cols, 1)
// tensor, multiplied along mode 1, and that slice is the matrix row for row.
#include "io/slice_source.hpp"

#include <catch2/catch.hpp>
#include <fstream>

#include "core/sptv_matrix.hpp"
#include "features/slice_graph.hpp"
#include "io/matrix_file.hpp"
#include "io/tensor_file.hpp"
#include "test_support.hpp"

using namespace sparsetune;

namespace {

// 3 x 4, row 1 empty: [[1 0 2 0] [0 0 0 0] [0 3 0 4]].
Csr64 small_matrix() {
  Csr64 a;
  a.rows = 3;
  a.cols = 4;
  a.row_ptr = {0, 2, 2, 4};
  a.col_idx = {0, 2, 1, 3};
  a.val = {1, 2, 3, 4};
  return a;
}

}  // namespace

TEST_CASE("a matrix is the one slice of an (rows, cols, 1) tensor along mode 1",
          "[io][slice-source]") {
  const auto a = small_matrix();
  const auto t = io::matrix_as_slice(a);
  CHECK(t.dims == std::vector<std::int64_t>{3, 4, 1});
  CHECK(t.idx[0] == std::vector<std::int64_t>{0, 0, 2, 2});
  CHECK(t.idx[1] == std::vector<std::int64_t>{0, 2, 1, 3});
  CHECK(t.idx[2] == std::vector<std::int64_t>{0, 0, 0, 0});
  CHECK(t.val == std::vector<double>{1, 2, 3, 4});
  CHECK(is_sorted_by_modes(t, {0, 1, 2}, true));

  const auto m = sptv_matrix(t, io::kMatrixSliceMode);
  CHECK(m.slice_mode == 2);
  CHECK(m.slices == 1);
  // The non-empty rows 0 and 2, their columns and values as the matrix holds them.
  CHECK(m.a.rows == 2);
  CHECK(m.a.cols == 4);
  CHECK(m.a.row_ptr == std::vector<std::int64_t>{0, 2, 4});
  CHECK(m.a.col_idx == std::vector<std::int64_t>{0, 2, 1, 3});
  CHECK(m.a.val == std::vector<double>{1, 2, 3, 4});
  CHECK(m.row_slice == std::vector<std::int64_t>{0, 0});

  // Slice-GCN sees the same input as for the matrix itself.
  const auto in = features::slice_inputs(m);
  REQUIRE(in.size() == 1);
  const auto direct = features::matrix_input(a);
  CHECK(in[0].slice == 0);
  CHECK(in[0].globals == direct.globals);
  CHECK(in[0].edges == direct.edges);
  CHECK(in[0].nonempty_rows == 2);
  CHECK(in[0].globals[0] == 3);  // rows, the empty one counted, as tensor_features counts
  CHECK(in[0].globals[2] == 4);  // entries
}

TEST_CASE("read_slice_source tells matrices from tensors by name and container",
          "[io][slice-source]") {
  testing::TempDir dir("sparsetune-slice-source");
  const auto a = small_matrix();
  for (const char* name : {"m.mtx", "m.mtx.gz", "m.safetensors"}) {
    INFO(name);
    io::write_matrix(dir.file(name), a);
    CHECK(io::is_matrix_source(dir.file(name)));
    const auto s = io::read_slice_source(dir.file(name));
    CHECK(s.matrix);
    CHECK(s.tensor.dims == std::vector<std::int64_t>{3, 4, 1});
    CHECK(s.tensor.val == std::vector<double>{1, 2, 3, 4});
  }
  SparseTensor x;
  x.dims = {2, 2, 2};
  x.idx = {{0, 1}, {1, 0}, {1, 1}};
  x.val = {5, 6};
  for (const char* name : {"x.tns", "x.safetensors"}) {
    INFO(name);
    io::write_tensor(dir.file(name), x);
    CHECK_FALSE(io::is_matrix_source(dir.file(name)));
    const auto s = io::read_slice_source(dir.file(name));
    CHECK_FALSE(s.matrix);
    CHECK(s.tensor.dims == x.dims);
    CHECK(s.tensor.val == x.val);
  }
  {
    std::ofstream(dir.file("bad.mtx")) << "%%MatrixMarket matrix coordinate real general\n"
                                          "2 2 1\n3 1 1\n";
  }
  CHECK_THROWS_WITH(io::read_slice_source(dir.file("bad.mtx")), Catch::Contains("bad.mtx"));
}
