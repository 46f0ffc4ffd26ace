// [gpu] tests of the runtime: every cuSPARSE baseline agrees with the fp64 reference, on the
// shared matrices and on edge cases; a faulting or hanging kernel ends only the worker.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "core/convert.hpp"
#include "io/matrix_file.hpp"
#include "runtime/bench.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/nvrtc.hpp"
#include "runtime/worker.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace sparsetune;
using namespace sparsetune::runtime;

namespace {

WorkerLaunch self_launch() { return {{"/proc/self/exe", kWorkerSubcommand}}; }

Csr64 from_triplets(std::int64_t rows, std::int64_t cols,
                    const std::vector<std::tuple<std::int64_t, std::int64_t, double>>& t) {
  Coo64 c;
  c.rows = rows;
  c.cols = cols;
  for (auto [r, k, v] : t) {
    c.row.push_back(r);
    c.col.push_back(k);
    c.val.push_back(v);
  }
  return coo_to_csr<std::int64_t, std::int64_t>(c);
}

Csr64 random_matrix(std::int64_t rows, std::int64_t cols, std::int64_t nnz, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::tuple<std::int64_t, std::int64_t, double>> t;
  for (std::int64_t k = 0; k < nnz; ++k)
    t.emplace_back(rng() % rows, rng() % cols, std::uniform_real_distribution<>(-2, 2)(rng));
  return from_triplets(rows, cols, t);
}

// The warm measurement exists, its statistics are ordered, and its batches are the protocol's.
// How warm compares with flushed is a benchmark (docs/benchmarks.md), not a test.
void check_warm(const BaselineResult& b, std::int64_t nnz) {
  REQUIRE(b.warm.measured);
  CHECK(b.warm.median_us > 0);
  CHECK(b.warm.min_us > 0);
  CHECK(b.warm.min_us <= b.warm.median_us);
  CHECK(b.warm.median_us <= b.warm.max_us);
  if (nnz > 0)
    CHECK(b.warm.gflops > 0);
  else
    CHECK(b.warm.gflops == 0);  // no entries, no flops
  CHECK(b.warm.bandwidth_fraction > 0);
  CHECK(b.warm.batches == kWarmBatches);
  CHECK(b.warm.runs_per_batch ==
        warm_runs_per_batch(b.time_ms.count, b.time_ms.median, kWarmBatches));
}

// Every baseline either ran and verified, or was declined (unsupported / left out by its fill
// criterion) with a reason; the CSR baseline always runs.
void check_all(const BenchReport& r, const std::string& what) {
  bool csr_ran = false;
  for (const auto& b : r.results) {
    INFO(what << " " << b.name << " n=" << b.n << " " << b.dtype << ": " << b.status << " "
              << b.note << " error " << b.error << " tol " << b.tolerance);
    if (b.status == "ok") {
      CHECK(b.verified);
      CHECK(b.time_ms.count >= 1);
      check_warm(b, r.nnz);
      if (b.name.rfind("csr-alg1", 0) == 0 || b.name == "unfold-csr-alg1") csr_ran = true;
    } else {
      CHECK((b.status == "unsupported" || b.status == "skipped"));
      CHECK(!b.note.empty());
    }
  }
  CHECK(csr_ran);
  CHECK(r.worker_starts == 1);
}

BenchOptions options(const std::string& op, DType t, std::vector<std::int64_t> n = {8}) {
  BenchOptions o;
  o.op = op;
  o.dtype = t;
  o.n = std::move(n);
  o.runs = 3;
  o.timeout_s = 300;
  o.launch = self_launch();
  return o;
}

void check_matrix(const Csr64& a, const std::string& what, bool f16 = true) {
  for (DType t : {DType::f32, DType::f64, DType::f16}) {
    if (t == DType::f16 && !f16) continue;
    check_all(bench_matrix(a, options("spmv", t)), what + " spmv " + dtype_name(t));
    check_all(bench_matrix(a, options("spmm", t, {1, 8})), what + " spmm " + dtype_name(t));
  }
}

}  // namespace

TEST_CASE("baselines agree with the reference on edge cases", "[gpu]") {
  SECTION("1x1") { check_matrix(from_triplets(1, 1, {{0, 0, 3.0}}), "1x1"); }
  SECTION("empty rows") {
    check_matrix(from_triplets(6, 6, {{0, 1, 1.0}, {0, 5, 2.0}, {3, 3, -1.0}, {5, 0, 4.0}}),
                 "empty rows");
  }
  SECTION("rectangular") {
    check_matrix(random_matrix(37, 301, 900, 1), "37x301");
    check_matrix(random_matrix(301, 37, 900, 2), "301x37");
  }
  SECTION("all empty") { check_matrix(from_triplets(10, 7, {}), "all-empty"); }
  SECTION("one row of 10^5 entries") {
    std::vector<std::tuple<std::int64_t, std::int64_t, double>> t;
    std::mt19937_64 rng(3);
    for (std::int64_t k = 0; k < 100000; ++k)
      t.emplace_back(1, k, std::uniform_real_distribution<>(-1, 1)(rng));
    t.emplace_back(0, 7, 1.0);
    t.emplace_back(2, 99999, -1.0);
    check_matrix(from_triplets(3, 100000, t), "long row", false);
  }
  SECTION("dense 64x64 blocks take the blocked formats") {
    std::vector<std::tuple<std::int64_t, std::int64_t, double>> t;
    for (std::int64_t r = 0; r < 64; ++r)
      for (std::int64_t c = 0; c < 64; ++c) t.emplace_back(r, c, 1.0 + 0.01 * (r - c));
    const Csr64 a = from_triplets(64, 64, t);
    for (const auto& op : {"spmv", "spmm"})
      for (DType d : {DType::f32, DType::f64}) {
        const auto rep = bench_matrix(a, options(op, d, {8}));
        check_all(rep, std::string("dense ") + op);
        for (const auto& b : rep.results)
          if (b.name == "bsr-alg1" || b.name == "blocked-ell") CHECK(b.status == "ok");
      }
  }
}

TEST_CASE("SpTV baselines agree with the reference", "[gpu]") {
  SparseTensor x;
  x.dims = {50, 40, 30};
  x.idx.resize(3);
  std::mt19937_64 rng(5);
  for (int e = 0; e < 3000; ++e) {
    for (int m = 0; m < 3; ++m) x.idx[m].push_back(rng() % x.dims[m]);
    x.val.push_back(std::uniform_real_distribution<>(-1, 1)(rng));
  }
  for (int mode = 0; mode < 3; ++mode)
    for (DType t : {DType::f32, DType::f64}) {
      auto o = options("sptv", t);
      o.mode = mode;
      check_all(bench_tensor(x, o), "sptv mode " + std::to_string(mode));
    }
}

TEST_CASE("baselines agree with the reference on the shared matrices", "[gpu]") {
  const fs::path dir = testing::shared_dir() / "matrices";
  REQUIRE(fs::is_directory(dir));
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().string().ends_with(".mtx.gz")) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(!files.empty());
  int benched = 0;
  for (const auto& f : files) {
    Csr64 a;
    try {
      a = io::read_matrix(f.string());
    } catch (const Error& e) {  // complex-valued files have no real baselines
      WARN("not benchmarked: " << e.what());
      continue;
    }
    ++benched;
    const std::string name = f.filename().string();
    check_all(bench_matrix(a, options("spmv", DType::f32)), name + " spmv f32");
    check_all(bench_matrix(a, options("spmv", DType::f64)), name + " spmv f64");
    check_all(bench_matrix(a, options("spmm", DType::f32, {8})), name + " spmm f32");
  }
  CHECK(benched > 0);
}

TEST_CASE("a faulting or hanging kernel ends only the worker", "[gpu]") {
  Worker w(self_launch());
  const auto dev = w.call({{"job", "device"}}, 60);
  REQUIRE(dev.ok);
  const std::string arch = dev.body["device"]["arch"];
  const std::string src = R"(
extern "C" __global__ void fill(float* out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = (float)i;
}
extern "C" __global__ void out_of_bounds(float* out, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i + (1LL << 36)] = 1.0f;
}
extern "C" __global__ void spin(float* out, long long n) {
  // clock64() is volatile: the loop cannot be optimised away, and it outlasts any watchdog.
  const long long t0 = clock64();
  while (clock64() - t0 < (1LL << 62)) {
  }
  out[0] = 1.0f;
}
)";
  const auto c = compile({"planted", src}, {arch, {}}, nullptr);
  const fs::path cubin = fs::temp_directory_path() / ("planted-" + arch + ".cubin");
  write_file_atomic(cubin, c.cubin.data(), c.cubin.size());
  auto run = [&](const std::string& k, double timeout) {
    return w.call({{"job", "kernel"}, {"cubin", cubin.string()}, {"kernel", k}, {"n", 1000}},
                  timeout);
  };
  auto good = run("fill", 60);
  REQUIRE(good.ok);
  CHECK(good.body["written"] == 1000);
  CHECK(good.body["sum"].get<double>() == Approx(999.0 * 1000.0 / 2.0));

  const auto bad = run("out_of_bounds", 60);
  CHECK(!bad.ok);
  CHECK(bad.worker_lost);
  INFO(bad.error);
  CHECK(!bad.error.empty());

  good = run("fill", 60);
  CHECK(good.ok);
  CHECK(good.body["written"] == 1000);

  const auto hung = run("spin", 3);
  CHECK(!hung.ok);
  CHECK(hung.worker_lost);
  CHECK(hung.error.find("timed out") != std::string::npos);

  good = run("fill", 60);
  CHECK(good.ok);
  CHECK(w.starts() == 3);
  fs::remove(cubin);
}
