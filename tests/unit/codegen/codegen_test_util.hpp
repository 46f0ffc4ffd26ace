#pragma once
// Graphs for the codegen tests: the shipped known formats and seeded random compositions.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "codegen/emit.hpp"
#include "core/convert.hpp"
#include "core/matrix.hpp"
#include "graph/graph.hpp"
#include "graph/random_graph.hpp"
#include "runtime/nvrtc.hpp"

namespace sparsetune::test {

inline std::filesystem::path repo_root() {
  return std::filesystem::path(SPARSETUNE_TEST_DATA_DIR).parent_path().parent_path();
}

inline std::vector<graph::Graph> known_graphs() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(repo_root() / "configs" / "graphs"))
    files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::vector<graph::Graph> v;
  for (const auto& f : files) v.push_back(graph::read_graph(f));
  return v;
}

// 5-point Laplacian on an n x n grid, with distinct off-diagonal values (a diagonal matrix
// structure whose boundary rows are shorter).
inline Csr64 stencil5(std::int64_t n) {
  Coo64 c;
  c.rows = c.cols = n * n;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t r = i * n + j;
      auto add = [&](std::int64_t col, double v) {
        c.row.push_back(r), c.col.push_back(col), c.val.push_back(v);
      };
      add(r, 4.0);
      if (j > 0) add(r - 1, -1.0 - 0.01 * static_cast<double>(r));
      if (j + 1 < n) add(r + 1, -1.0);
      if (i > 0) add(r - n, -1.0 + 0.02 * static_cast<double>(j));
      if (i + 1 < n) add(r + n, -1.0);
    }
  return coo_to_csr<std::int64_t, std::int64_t>(c);
}

// Compiles every job under NVRTC for sm_90 and requires each to give a cubin (the error and
// source are printed for one that does not).
inline void require_all_compile(const std::vector<runtime::CompileJob>& jobs) {
  const auto results = runtime::compile_batch(jobs, runtime::CompileOptions{}, nullptr, 2);
  REQUIRE(results.size() == jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    INFO(jobs[i].name << "\n" << results[i].error << "\n" << jobs[i].source);
    REQUIRE(results[i].ok);
    REQUIRE_FALSE(results[i].cubin.empty());
  }
}

// nvcc as a user runs it, or "" when this machine has none (the NVRTC tests cover the source).
inline std::string nvcc_path() {
  const std::string nvcc = "/usr/local/cuda/bin/nvcc";
  return std::filesystem::exists(nvcc) ? nvcc : std::string();
}

// Writes the emitted folder into `dir` beside a user's program that includes kernel.h, loads the
// format and runs it, and compiles both with `nvcc -c -arch=sm_90`; returns nvcc's exit status
// and its output in `log`.
// `user_main` replaces the SpMV program (an SpMM one calls SpMM's run()).
inline int nvcc_compile_as_user(const codegen::Emitted& e, const graph::Graph& g,
                                const std::filesystem::path& dir, std::string& log,
                                const std::string& user_main = "") {
  codegen::write_emitted(e, g, dir.string());
  if (!user_main.empty()) {
    std::ofstream(dir / "user.cu") << user_main;
  } else {
    std::ofstream user(dir / "user.cu");
    user << "#include \"kernel.h\"\nint main() {\n  sparsetune_kernel::Format f;\n"
            "  if (sparsetune_kernel::load(\"format.safetensors\", &f) != cudaSuccess) return 1;\n"
            "  double *x = nullptr, *y = nullptr;\n"
            "  sparsetune_kernel::run(f, x, y);\n"
            "  sparsetune_kernel::run(f, x, y, 2.0, 0.5, cudaStream_t{});\n"
            "  sparsetune_kernel::Graph graph;\n"
            "  graph.run(f, x, y);\n"
            "  graph.run(f, x, y, 2.0, 0.5, cudaStream_t{});\n"
            "  sparsetune_kernel::release(&f);\n  return 0;\n}\n";
  }
  const std::string nvcc = nvcc_path();
  const std::string cmd = "cd '" + dir.string() + "' && " + nvcc +
                          " -c -arch=sm_90 kernel.cu -o kernel.o > nvcc.log 2>&1 && " + nvcc +
                          " -c -arch=sm_90 user.cu -o user.o >> nvcc.log 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream in(dir / "nvcc.log");
  log.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return rc;
}

}  // namespace sparsetune::test
