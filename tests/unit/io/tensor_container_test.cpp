// The tensor container: round trips (orders 3 and 4, F32 and F64 values, I32 and I64 indices),
// the read/write dispatch by content and extension, and every corruption the reader refuses.
#include "io/tensor_container.hpp"

#include <cmath>
#include <limits>
#include <random>

#include "io/file_bytes.hpp"
#include "io/matrix_file.hpp"
#include "io/tensor_file.hpp"
#include "test_util.hpp"

using namespace sparsetune;
using namespace sparsetune::io;

namespace {
// A random tensor in lexicographic order, no repeated coordinates; values exact floats or not.
SparseTensor random_tensor(std::vector<std::int64_t> dims, std::int64_t n, bool float_values,
                           unsigned seed) {
  std::mt19937_64 rng(seed);
  SparseTensor t;
  t.dims = dims;
  t.idx.resize(dims.size());
  for (std::int64_t k = 0; k < n; ++k) {
    for (std::size_t m = 0; m < dims.size(); ++m)
      t.idx[m].push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(dims[m])));
    const double v =
        std::ldexp(static_cast<double>(rng() % 100000) + 1.0, -7) * (k % 3 == 0 ? -1.0 : 1.0);
    t.val.push_back(float_values ? v : v + 1e-12);  // 1e-12 more is not a float
  }
  std::vector<int> natural(dims.size());
  for (std::size_t m = 0; m < dims.size(); ++m) natural[m] = static_cast<int>(m);
  sort_by_modes(t, natural);
  merge_duplicates(t);
  return t;
}

void check_same(const SparseTensor& a, const SparseTensor& b) {
  CHECK(a.dims == b.dims);
  CHECK(a.idx == b.idx);
  CHECK(a.val == b.val);  // exact
}

std::string with_metadata(const SafetensorsFile& f, const std::string& key,
                          const std::string& value) {
  SafetensorsFile g = f;
  g.metadata[key] = value;
  return serialize_safetensors(g);
}

template <class T>
std::string with_array(const SafetensorsFile& f, const std::string& name, std::vector<T> values) {
  SafetensorsFile g = f;
  bool found = false;
  for (auto& arr : g.arrays)
    if (arr.name == name) {
      SafetensorsFile one;
      add_array(one, name, values);
      arr = one.arrays[0];
      found = true;
    }
  if (!found) add_array(g, name, values);
  return serialize_safetensors(g);
}
}  // namespace

TEST_CASE("tensor container round trips orders 3 and 4 with F32 and F64 values",
          "[io][tensor-container]") {
  iotest::TempDir dir;
  for (bool floats : {true, false})
    for (const auto& dims : {std::vector<std::int64_t>{7, 50, 3}, {4, 9, 2, 300}}) {
      INFO("order " << dims.size() << ", float values " << floats);
      const SparseTensor t = random_tensor(dims, 400, floats, 11 + dims.size());
      REQUIRE(t.nnz() > 300);
      const SafetensorsFile f = tensor_to_safetensors(t);
      CHECK(f.metadata.at("format") == "sparsetune-tensor");
      CHECK(f.metadata.at("version") == "1");
      CHECK(f.metadata.at("order") == std::to_string(dims.size()));
      CHECK(f.metadata.at("nnz") == std::to_string(t.nnz()));
      CHECK(f.at("val").dtype == (floats ? "F32" : "F64"));
      for (std::size_t m = 0; m < dims.size(); ++m)
        CHECK(f.at("idx" + std::to_string(m)).dtype == "I32");

      write_tensor(dir.file("t.safetensors"), t);
      TnsInfo info;
      check_same(t, read_tensor(dir.file("t.safetensors"), &info));
      CHECK(info.header);
      CHECK(info.duplicates == 0);
      CHECK(info.stored_entries == t.nnz());
      CHECK(is_tensor_file(dir.file("t.safetensors")));

      // .tns -> container -> .tns keeps every bit, and the container file is recognised by its
      // content whatever its name.
      write_tensor(dir.file("t.tns"), t);
      check_same(t, read_tensor(dir.file("t.tns")));
      std::filesystem::copy_file(dir.file("t.safetensors"), dir.file("t.bin"),
                                 std::filesystem::copy_options::overwrite_existing);
      check_same(t, read_tensor(dir.file("t.bin")));
      CHECK(is_tensor_file(dir.file("t.bin")));
    }
  CHECK(iotest::count_entries(dir.path) == 3);  // no temporary files left behind
}

TEST_CASE("tensor container: I64 indices beyond 2^31, empty tensors, refused writes",
          "[io][tensor-container]") {
  SparseTensor wide;
  wide.dims = {3, std::int64_t{1} << 33, 2};
  wide.idx = {{0, 2}, {5, (std::int64_t{1} << 32) + 7}, {1, 0}};
  wide.val = {1.5, -2.0};
  const SafetensorsFile w = tensor_to_safetensors(wide);
  CHECK(w.at("idx0").dtype == "I32");
  CHECK(w.at("idx1").dtype == "I64");
  check_same(wide, parse_tensor_container(serialize_safetensors(w), "w"));

  SparseTensor empty;
  empty.dims = {2, 3, 4};
  empty.idx.resize(3);
  check_same(empty,
             parse_tensor_container(serialize_safetensors(tensor_to_safetensors(empty)), "e"));

  SparseTensor nan = wide;
  nan.val[1] = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_CONTAINING(tensor_to_safetensors(nan), "non-finite");
  SparseTensor outside = wide;
  outside.idx[2][1] = 2;
  CHECK_THROWS_CONTAINING(tensor_to_safetensors(outside), "entry 1", "mode 2");
  SparseTensor matrix;
  matrix.dims = {2, 2};
  matrix.idx.resize(2);
  CHECK_THROWS_CONTAINING(tensor_to_safetensors(matrix), "order 3 to 64");

  iotest::TempDir dir;
  CHECK_THROWS_CONTAINING(write_tensor(dir.file("t.mtx"), wide), "t.mtx",
                          "unknown tensor output format");
  CHECK(iotest::count_entries(dir.path) == 0);
}

TEST_CASE("tensor container reader refuses corrupt files with named errors",
          "[io][tensor-container]") {
  const std::string src = "t.safetensors";
  SparseTensor t;
  t.dims = {2, 3, 4};
  t.idx = {{0, 0, 1, 1}, {0, 2, 1, 2}, {3, 1, 0, 3}};
  t.val = {1.0, 2.0, 3.0, 4.0};
  const SafetensorsFile f = tensor_to_safetensors(t);
  auto load = [&](const std::string& bytes) { return parse_tensor_container(bytes, src); };
  REQUIRE(load(serialize_safetensors(f)).val == t.val);

  CHECK_THROWS_CONTAINING(load(with_metadata(f, "format", "sparsetune-matrix")), src,
                          "not a sparsetune tensor container");
  SafetensorsFile no_format = f;
  no_format.metadata.erase("format");
  CHECK_THROWS_CONTAINING(load(serialize_safetensors(no_format)), src, "lacks 'format'");
  CHECK_THROWS_CONTAINING(load(with_metadata(f, "version", "2")), src, "version '2'");
  CHECK_THROWS_CONTAINING(load(with_metadata(f, "order", "2")), src, "'order'", ">= 3");
  CHECK_THROWS_CONTAINING(load(with_metadata(f, "order", "65")), src, "order 65");
  CHECK_THROWS_CONTAINING(load(with_metadata(f, "order", "4")), src, "lists 3 dimensions");
  CHECK_THROWS_CONTAINING(load(with_metadata(f, "dims", "2,3")), src, "lists 2 dimensions");
  CHECK_THROWS_CONTAINING(load(with_metadata(f, "dims", "2,x,4")), src, "'dims'");
  CHECK_THROWS_CONTAINING(load(with_metadata(f, "dims", "2,0,4")), src, "'dims'", ">= 1");
  CHECK_THROWS_CONTAINING(load(with_metadata(f, "nnz", "-1")), src, "'nnz'");
  // Wrong lengths: the metadata's nnz against the arrays, and one array against the others.
  CHECK_THROWS_CONTAINING(load(with_metadata(f, "nnz", "5")), src, "idx0", "shape [5]");
  CHECK_THROWS_CONTAINING(load(with_array(f, "idx2", std::vector<std::int32_t>{3, 1, 0})), src,
                          "idx2", "shape [4]");
  CHECK_THROWS_CONTAINING(load(with_array(f, "val", std::vector<double>{1, 2, 3, 4, 5})), src,
                          "'val'", "shape [4]");
  // Indices out of range, on either side.
  CHECK_THROWS_CONTAINING(load(with_array(f, "idx1", std::vector<std::int32_t>{0, 2, 3, 2})), src,
                          "idx1[2] = 3", "dimension 3");
  CHECK_THROWS_CONTAINING(load(with_array(f, "idx2", std::vector<std::int64_t>{3, -1, 0, 3})), src,
                          "idx2[1] = -1");
  CHECK_THROWS_CONTAINING(load(with_metadata(f, "dims", "2,3,3")), src, "idx2[0] = 3");
  // Dtypes, values, names.
  CHECK_THROWS_CONTAINING(load(with_array(f, "idx0", std::vector<float>{0, 0, 1, 1})), src,
                          "'idx0'", "F32", "I32 or I64");
  CHECK_THROWS_CONTAINING(load(with_array(f, "val", std::vector<std::int32_t>{1, 2, 3, 4})), src,
                          "'val'", "I32", "F32 or F64");
  CHECK_THROWS_CONTAINING(load(with_array(f, "val", std::vector<double>{1, 2, INFINITY, 4})), src,
                          "val[2] is not finite");
  CHECK_THROWS_CONTAINING(load(with_array(f, "extra", std::vector<std::int32_t>{1})), src,
                          "unexpected array 'extra'");
  SafetensorsFile missing = f;
  missing.arrays.erase(missing.arrays.begin() + 1);
  CHECK_THROWS_CONTAINING(load(serialize_safetensors(missing)), src, "missing array 'idx1'");

  // A matrix container is not a tensor, and a tensor container is not a matrix.
  iotest::TempDir dir;
  Csr64 a{2, 2, {0, 1, 1}, {1}, {5.0}};
  write_matrix(dir.file("m.safetensors"), a);
  CHECK_FALSE(is_tensor_file(dir.file("m.safetensors")));
  CHECK_THROWS_CONTAINING(read_tensor(dir.file("m.safetensors")), "m.safetensors",
                          "not a sparsetune tensor container");
  write_tensor(dir.file("t.safetensors"), t);
  CHECK_THROWS_CONTAINING(read_matrix(dir.file("t.safetensors")), "t.safetensors",
                          "tensor container");
}

TEST_CASE("tensor container: another writer's order is sorted and repeats summed",
          "[io][tensor-container]") {
  SparseTensor t;
  t.dims = {2, 3, 4};
  t.idx = {{1, 0, 1, 0}, {2, 0, 2, 1}, {3, 1, 3, 0}};
  t.val = {1.0, 2.0, 0.5, 4.0};
  TnsInfo info;
  const SparseTensor u =
      parse_tensor_container(serialize_safetensors(tensor_to_safetensors(t)), "u", &info);
  CHECK(info.stored_entries == 4);
  CHECK(info.duplicates == 1);
  CHECK(u.idx == std::vector<std::vector<std::int64_t>>{{0, 0, 1}, {0, 1, 2}, {1, 0, 3}});
  CHECK(u.val == std::vector<double>{2.0, 4.0, 1.5});
}

TEST_CASE("truncated tensor containers are refused, not misread", "[io][tensor-container]") {
  iotest::TempDir dir;
  SparseTensor t = random_tensor({5, 6, 7}, 50, false, 3);
  write_tensor(dir.file("t.safetensors"), t);
  const std::string bytes = iotest::read_bytes(dir.file("t.safetensors"));
  for (std::size_t cut : {std::size_t{3}, std::size_t{12}, bytes.size() / 2, bytes.size() - 1}) {
    INFO("cut at " << cut);
    iotest::write_text(dir.file("cut.safetensors"), bytes.substr(0, cut));
    CHECK_THROWS_CONTAINING(read_tensor(dir.file("cut.safetensors")), "cut.safetensors",
                            "safetensors: ");
  }
  // gzip-compressed containers are read like gzip-compressed .tns files.
  iotest::write_text(dir.file("t.safetensors.gz"), gzip(bytes));
  check_same(t, read_tensor(dir.file("t.safetensors.gz")));
}
