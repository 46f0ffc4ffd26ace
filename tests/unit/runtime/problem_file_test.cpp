// The worker's input files round-trip, and damaged ones are refused; the tensor unfolding the
// SpTV baselines use gives sptv_reference's answer.
#include "runtime/problem_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/error.hpp"
#include "core/reference.hpp"
#include "runtime/sptv_kernel.hpp"
#include "runtime/thread_pool.hpp"

namespace fs = std::filesystem;
using namespace sparsetune;
using namespace sparsetune::runtime;

namespace {
fs::path temp_file(const std::string& name) {
  return fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
}

SparseTensor random_tensor(std::uint64_t seed) {
  SparseTensor x;
  x.dims = {6, 5, 4};
  x.idx.resize(3);
  std::mt19937_64 rng(seed);
  for (int e = 0; e < 60; ++e) {  // some coordinates repeat: duplicates are summed
    for (int m = 0; m < 3; ++m) x.idx[m].push_back(static_cast<std::int64_t>(rng() % x.dims[m]));
    x.val.push_back(std::uniform_real_distribution<>(-1, 1)(rng));
  }
  return x;
}
}  // namespace

TEST_CASE("matrix problem files round-trip and damaged ones are refused") {
  Csr64 a;
  a.rows = 3;
  a.cols = 4;
  a.row_ptr = {0, 2, 2, 3};
  a.col_idx = {0, 3, 1};
  a.val = {1.5, -2.0, 1e-300};
  const auto path = temp_file("problem.safetensors");
  write_problem(path, a);
  const Csr64 b = read_matrix_problem(path);
  CHECK(b.rows == 3);
  CHECK(b.cols == 4);
  CHECK(b.row_ptr == a.row_ptr);
  CHECK(b.col_idx == a.col_idx);
  CHECK(b.val == a.val);
  CHECK_THROWS_AS(read_tensor_problem(path), Error);  // the other kind

  // Truncated: the last array ends past the file.
  fs::resize_file(path, fs::file_size(path) - 8);
  CHECK_THROWS_AS(read_matrix_problem(path), Error);
  { std::ofstream(path, std::ios::binary) << "\xff\xff\xff\xff\xff\xff\xff\x7f{}"; }
  CHECK_THROWS_AS(read_matrix_problem(path), Error);
  fs::remove(path);
  CHECK_THROWS_AS(read_matrix_problem(path), Error);

  a.col_idx[1] = 4;  // out of range
  write_problem(path, a);
  CHECK_THROWS_AS(read_matrix_problem(path), Error);
  fs::remove(path);
}

TEST_CASE("tensor problem files round-trip") {
  const SparseTensor x = random_tensor(1);
  const auto path = temp_file("tensor.safetensors");
  write_problem(path, x);
  const SparseTensor y = read_tensor_problem(path);
  CHECK(y.dims == x.dims);
  CHECK(y.idx == x.idx);
  CHECK(y.val == x.val);
  fs::remove(path);
}

TEST_CASE("SpMV with the mode unfolding is SpTV") {
  const SparseTensor x = random_tensor(2);
  for (int mode = 0; mode < 3; ++mode) {
    std::vector<double> v(x.dims[mode]);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.5 + static_cast<double>(i);
    const Unfolding u = unfold(x, mode);
    const SparseTensor ref = sptv_reference(x, mode, v);
    CHECK(u.a.rows == ref.nnz());
    CHECK(u.a.cols == x.dims[mode]);
    CHECK(relative_l2_error(spmv_reference(u.a, v), ref.val) < 1e-15);
    // The COO kernel's view: entry e adds into row fiber_of[e].
    std::vector<double> y(u.a.rows, 0.0);
    for (std::size_t e = 0; e < u.fiber_of.size(); ++e)
      y[u.fiber_of[e]] += u.a.val[e] * v[u.a.col_idx[e]];
    CHECK(relative_l2_error(y, ref.val) < 1e-15);
  }
  CHECK_THROWS_AS(unfold(x, 3), Error);
}

TEST_CASE("parallel_for covers every index once and passes on exceptions") {
  std::vector<int> hits(1000, 0);
  parallel_for(
      1000, [&](std::int64_t i) { hits[i] += 1; }, 4);
  CHECK(std::count(hits.begin(), hits.end(), 1) == 1000);
  CHECK_THROWS_AS(parallel_for(
                      10,
                      [](std::int64_t i) {
                        if (i == 7) throw Error("seven");
                      },
                      3),
                  Error);
  parallel_for(0, [](std::int64_t) { FAIL("called"); });
}
