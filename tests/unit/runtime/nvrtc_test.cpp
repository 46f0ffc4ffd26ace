// NVRTC without a device: cubins for named architectures, compile errors with their log, the
// on-disk cache and parallel batches.
#include "runtime/nvrtc.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "runtime/kernel_cache.hpp"
#include "runtime/sptv_kernel.hpp"

namespace fs = std::filesystem;
using namespace sparsetune::runtime;

namespace {
const char* kSaxpy = R"(
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

struct TempCache {
  fs::path dir =
      fs::temp_directory_path() / ("sparsetune-cache-test-" + std::to_string(::getpid()));
  TempCache() { fs::remove_all(dir); }
  ~TempCache() { fs::remove_all(dir); }
};

bool is_elf(const std::vector<char>& b) {
  return b.size() > 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F';
}
}  // namespace

TEST_CASE("NVRTC compiles for named architectures without a device") {
  for (const char* arch : {"sm_80", "sm_90"}) {
    const auto c = compile({"saxpy", kSaxpy}, {arch, {}}, nullptr);
    CHECK(c.ok);
    CHECK(!c.from_cache);
    CHECK(is_elf(c.cubin));
  }
  const auto s = compile({"sptv", sptv_coo_atomic_source()}, {"sm_90", {"-std=c++17"}}, nullptr);
  CHECK(is_elf(s.cubin));
  CHECK(nvrtc_version().find('.') != std::string::npos);
}

TEST_CASE("a compile error carries the compiler log") {
  const std::string bad = "extern \"C\" __global__ void k(float* y) { y[0] = undeclared_name; }";
  try {
    compile({"broken", bad}, {"sm_90", {}}, nullptr);
    FAIL("no CompileError");
  } catch (const CompileError& e) {
    CHECK(e.log().find("undeclared_name") != std::string::npos);
    CHECK(std::string(e.what()).find("undeclared_name") != std::string::npos);
    CHECK(std::string(e.what()).find("broken") != std::string::npos);
  }
}

TEST_CASE("bad architecture names are refused") {
  CHECK_THROWS_AS(check_arch("sm_9"), sparsetune::Error);
  CHECK_THROWS_AS(check_arch("compute_90"), sparsetune::Error);
  CHECK_THROWS_AS(check_arch("sm_90b"), sparsetune::Error);
  CHECK_NOTHROW(check_arch("sm_90a"));
  CHECK_NOTHROW(check_arch("sm_100"));
  // Well formed, but older than any target of this NVRTC: refused up front, naming the range.
  CHECK_THROWS_WITH(check_arch("sm_20"), Catch::Contains("'sm_20' is not one NVRTC") &&
                                             Catch::Contains("compiles for (sm_"));
}

TEST_CASE("the kernel cache hits on identical compilations and misses otherwise") {
  TempCache t;
  KernelCache cache(t.dir);
  const auto first = compile({"saxpy", kSaxpy}, {"sm_80", {}}, &cache);
  CHECK(!first.from_cache);
  const auto again = compile({"saxpy", kSaxpy}, {"sm_80", {}}, &cache);
  CHECK(again.from_cache);
  CHECK(again.cubin == first.cubin);
  CHECK(!compile({"saxpy", kSaxpy}, {"sm_90", {}}, &cache).from_cache);             // architecture
  CHECK(!compile({"saxpy", kSaxpy}, {"sm_80", {"-lineinfo"}}, &cache).from_cache);  // options
  CHECK(!compile({"saxpy", std::string(kSaxpy) + "\n"}, {"sm_80", {}}, &cache).from_cache);
  int entries = 0, temporaries = 0;
  for (const auto& e : fs::directory_iterator(t.dir)) {
    entries += e.path().extension() == ".cubin";
    temporaries += e.path().string().find(".tmp.") != std::string::npos;
  }
  CHECK(entries == 4);
  CHECK(temporaries == 0);
  CHECK(KernelCache::key("a", "sm_80", "13.0", {}) != KernelCache::key("a", "sm_80", "13.1", {}));
  CHECK(KernelCache::key("ab", "sm_80", "1", {}) != KernelCache::key("a", "bsm_80", "1", {}));
}

TEST_CASE("the cache folder follows XDG_CACHE_HOME, else HOME") {
  const char* old_xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old_xdg ? old_xdg : "";
  ::setenv("XDG_CACHE_HOME", "/some/where", 1);
  CHECK(KernelCache::default_dir() == fs::path("/some/where/sparsetune"));
  ::unsetenv("XDG_CACHE_HOME");
  if (const char* home = std::getenv("HOME"))
    CHECK(KernelCache::default_dir() == fs::path(home) / ".cache" / "sparsetune");
  if (old_xdg) ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
}

TEST_CASE("a batch compiles in parallel and reports each candidate") {
  TempCache t;
  KernelCache cache(t.dir);
  std::vector<CompileJob> jobs;
  for (int i = 0; i < 5; ++i)
    jobs.push_back({"k" + std::to_string(i), "extern \"C\" __global__ void k(float* y) { y[0] = " +
                                                 std::to_string(i) + ".0f; }"});
  jobs.push_back({"bad", "this is not CUDA"});
  const auto out = compile_batch(jobs, {"sm_90", {}}, &cache, 3);
  REQUIRE(out.size() == jobs.size());
  for (int i = 0; i < 5; ++i) CHECK((out[i].ok && is_elf(out[i].cubin)));
  CHECK(!out[5].ok);
  CHECK(!out[5].log.empty());
  CHECK(out[5].error.find("bad") != std::string::npos);
  CHECK(out[0].cubin != out[1].cubin);
  const auto cached = compile_batch(jobs, {"sm_90", {}}, &cache, 0);
  for (int i = 0; i < 5; ++i) CHECK(cached[i].from_cache);
}
