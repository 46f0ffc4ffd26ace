// Generated kernels: complete text (no unexpanded slot), the arrays the format stores as
// parameters, and every one compiles under NVRTC for sm_90 (no GPU needed); the CSR-vector .cu
// that emit-kernel writes also compiles with nvcc as a user would compile it.
#include "codegen/kernel_builder.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "../graph/graph_test_util.hpp"
#include "codegen/emit.hpp"
#include "codegen/fusion.hpp"
#include "codegen_test_util.hpp"
#include "format_file_edit.hpp"
#include "runtime/nvrtc.hpp"
#include "test_support.hpp"

using namespace sparsetune;

namespace {

void require_complete(const codegen::Emitted& e, const std::string& name) {
  const std::string& s = e.kernels.source;
  REQUIRE(s.find("Operator graph \"" + name + "\"") != std::string::npos);
  for (const char* leftover :
       {"$EMIT", "$SIDE", "IN_ROW", "IN_V", "$THREADS", "$WARPS", "$N_BMTB", "$PARAMS", "$KERNEL"})
    REQUIRE(s.find(leftover) == std::string::npos);
  const auto u = codegen::plan_fusion(e.format);
  for (const auto& p : e.format.parts) {
    if (p.n_bmtb == 0) continue;
    if (u.fused) {  // a device function of the one fused kernel, over its own range of blocks
      REQUIRE(s.find("static __device__ void\n" + p.kernel + "(") != std::string::npos);
      REQUIRE(s.find("void __launch_bounds__(" + std::to_string(p.threads) + ")\n" +
                     codegen::kFusedKernel + "(") != std::string::npos);
      REQUIRE(e.host_header.find(std::string(codegen::kFusedKernel) + "<<<" +
                                 std::to_string(u.grid) + ", " + std::to_string(p.threads)) !=
              std::string::npos);
      continue;
    }
    REQUIRE(s.find("void __launch_bounds__(" + std::to_string(p.threads) + ")\n" + p.kernel +
                   "(") != std::string::npos);
    REQUIRE(e.host_header.find(p.kernel + "<<<" + std::to_string(p.grid) + ", " +
                               std::to_string(p.threads)) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("kernel sources are complete and name their graph", "[codegen]") {
  const Csr64 a = test::random_matrix(4, 90, 70, 0.06);
  for (const auto& g : test::known_graphs()) {
    INFO(g.name);
    const auto e = codegen::generate(g, a);
    require_complete(e, g.name);
    // Stored arrays are kernel parameters; formula arrays are functions, never parameters.
    for (const auto& p : e.format.parts)
      for (const auto& [name, arr] : p.arrays) {
        if (p.n_bmtb == 0) continue;  // no kernel
        const bool param = e.kernels.source.find("__restrict__ p_" + name) != std::string::npos;
        // Fused: the one kernel also takes it, prefixed by its part (p<i>_<name>).
        if (arr.stored() && codegen::plan_fusion(e.format).fused)
          REQUIRE(e.kernels.source.find("__restrict__ p" + std::to_string(&p - &e.format.parts[0]) +
                                        "_" + name) != std::string::npos);
        if (arr.stored()) REQUIRE(param);
        if (arr.model.kind == graph::ArrayModel::Kind::Derived)
          REQUIRE(e.kernels.source.find("#define A_" + name + "(i) ") != std::string::npos);
        else if (!arr.stored())
          REQUIRE(e.kernels.source.find("st_p" + std::to_string(&p - &e.format.parts[0]) + "_" +
                                        name + "(") != std::string::npos);
      }
  }
}

TEST_CASE("generated kernels compile under NVRTC for sm_90", "[codegen]") {
  std::vector<runtime::CompileJob> jobs;
  const Csr64 a = test::random_matrix(12, 150, 120, 0.05);
  const Csr64 wide = test::random_matrix(13, 70, 40, 0.2);
  int k = 0;
  for (const auto& g : test::known_graphs()) {
    codegen::EmitOptions o;
    o.design.dtype = std::vector<std::string>{"f64", "f32", "f16"}[k % 3];
    o.design.index_bits = k % 2 ? 64 : 0;
    o.optimizer.compress = k % 4 != 1;
    ++k;
    jobs.push_back({g.name + "-" + o.design.dtype, codegen::generate(g, a, o).kernels.source});
  }
  std::mt19937_64 rng(31337);
  int random = 0;
  for (int i = 0; i < 200 && random < 16; ++i) {
    const auto g = graph::random_graph(rng);
    try {
      codegen::EmitOptions o;
      o.design.dtype = std::vector<std::string>{"f64", "f32", "f16"}[i % 3];
      jobs.push_back({"random-" + std::to_string(i),
                      codegen::generate(g, i % 2 ? a : wide, o).kernels.source});
      ++random;
    } catch (const graph::DesignError&) {
    }
  }
  REQUIRE(random == 16);
  test::require_all_compile(jobs);
}

// CSR-vector and CSR-scalar (store-only) and segmented COO (atomics into a zeroed y), as a user
// compiles them.
TEST_CASE("emitted kernel.cu and kernel.h compile with nvcc as a user compiles them", "[codegen]") {
  if (test::nvcc_path().empty()) {
    WARN("nvcc not found; the NVRTC test covers the same source");
    return;
  }
  for (const char* name : {"csr-vector", "csr-scalar", "segmented-coo"}) {
    testing::TempDir dir("sparsetune-nvcc");
    graph::Graph g;
    for (const auto& k : test::known_graphs())
      if (k.name == name) g = k;
    const auto e = codegen::generate(g, test::shared_matrices()[1].second);
    REQUIRE(e.format.store_only == (std::string(name) != "segmented-coo"));
    std::string log;
    const int rc = test::nvcc_compile_as_user(e, g, dir.path, log);
    INFO(name << "\n" << log);
    REQUIRE(rc == 0);
    REQUIRE(std::filesystem::file_size(dir.path / "kernel.o") > 0);
    REQUIRE(std::filesystem::file_size(dir.path / "user.o") > 0);
  }
}

TEST_CASE("implied threads are computed in the kernel, not stored", "[codegen]") {
  const Csr64 a = test::random_matrix(17, 400, 300, 0.05, 0.2);
  for (const char* name : {"csr-vector", "acsr-binned"}) {
    graph::Graph g;
    for (const auto& k : test::known_graphs())
      if (k.name == name) g = k;
    const auto e = codegen::generate(g, a);
    for (const auto& p : e.format.parts) {
      if (p.n_bmtb == 0 || p.reductions.size() < 2) continue;  // the bins cut per thread
      INFO(name << " part " << p.path);
      REQUIRE(p.implied_threads != 0);
      for (auto arr : {graph::Arr::bmt_first_nz, graph::Arr::bmt_stride, graph::Arr::bmt_size,
                       graph::Arr::bmt_row})
        REQUIRE(p.array(arr).model.kind == graph::ArrayModel::Kind::Derived);
      const std::string stored = "p" + std::to_string(&p - &e.format.parts[0]) + ".bmt_size";
      REQUIRE(e.format_bytes.find(stored) == std::string::npos);
    }
  }
}

TEST_CASE("derived sizes are a constant only when every thread holds one entry", "[codegen]") {
  // One thread per warp block and row tile: the strided derivation reproduces these threads
  // (stride 1, several entries each), so sizes must be computed, not taken as 1.
  const Csr64 a = test::random_matrix(23, 60, 90, 0.2, 0.1);
  const auto g = graph::graph_from_json(nlohmann::json::parse(
      R"({"ops":[{"op":"COMPRESS"},{"op":"BMW_COL_BLOCK","cols":64},{"op":"BMT_ROW_BLOCK"},
                 {"op":"THREAD_BITMAP_RED"},{"op":"GMEM_ATOM_RED"}]})"));
  const auto e = codegen::generate(g, a);
  const auto& p = e.format.parts[0];
  REQUIRE(p.array(graph::Arr::bmt_size).model.kind == graph::ArrayModel::Kind::Derived);
  const auto& sizes = p.array(graph::Arr::bmt_size).ints;
  REQUIRE(std::any_of(sizes.begin(), sizes.end(), [](auto v) { return v > 1; }));
  REQUIRE(e.kernels.source.find("#define A_bmt_size(i) 1LL") == std::string::npos);
}

TEST_CASE("kernels index in 32 bits where every index fits, and in 64 where not", "[codegen]") {
  // Dense enough in places for the tensor-core formats to keep blocks.
  const Csr64 a = test::random_matrix(21, 120, 90, 0.3);
  int modelled = 0, masks = 0;
  for (const auto& g : test::known_graphs()) {
    INFO(g.name);
    const auto e = codegen::generate(g, a);
    REQUIRE(codegen::index_fits_int32(e.format));
    REQUIRE(e.kernels.source.find("typedef int st_idx_t;") != std::string::npos);
    REQUIRE(e.kernels.index_bits == 32);
    REQUIRE(e.kernels.source.find("typedef long long st_idx_t;") == std::string::npos);
    codegen::EmitOptions wide;
    wide.design.index_bits = 64;
    const auto w = codegen::generate(g, a, wide);
    REQUIRE_FALSE(codegen::index_fits_int32(w.format));
    REQUIRE(w.kernels.source.find("typedef long long st_idx_t;") != std::string::npos);
    REQUIRE(w.kernels.index_bits == 64);
    REQUIRE(w.kernels.source.find("typedef int st_idx_t;") == std::string::npos);

    // Past 2^30 rows, columns or entries: 64 bits.
    for (std::int64_t graph::Format::*field :
         {&graph::Format::rows, &graph::Format::cols, &graph::Format::nnz}) {
      auto f = e.format;
      f.*field = std::int64_t{1} << 30;
      REQUIRE_FALSE(codegen::index_fits_int32(f));
    }
    // A formula whose terms can pass 2^30 inside the array's length, or a coefficient that does:
    // 64 bits. A large offset added once is fine.
    for (std::size_t p = 0; p < e.format.parts.size(); ++p)
      for (const auto& [name, arr] : e.format.parts[p].arrays) {
        if (arr.held() || arr.length == 0) continue;
        auto f = e.format;
        auto& m = f.parts[p].arrays.at(name).model;
        m.a = std::int64_t{1} << 30;
        REQUIRE_FALSE(codegen::index_fits_int32(f));
        if (m.kind != graph::ArrayModel::Kind::Linear) continue;
        m.a = (std::int64_t{1} << 30) / (arr.length + 1) + 1;
        REQUIRE_FALSE(codegen::index_fits_int32(f));
        m.a = 1;
        m.b = std::int64_t{1} << 29;
        REQUIRE(codegen::index_fits_int32(f));
        ++modelled;
      }
    // A column past 2^30 is too wide, unless the word also holds a packed step (unsigned bits that
    // the kernel masks before the cast).
    for (std::size_t p = 0; p < e.format.parts.size(); ++p) {
      if (!e.format.parts[p].has(graph::Arr::nz_col) ||
          e.format.parts[p].array(graph::Arr::nz_col).ints.empty())
        continue;
      auto f = e.format;
      f.parts[p].arrays.at("nz_col").ints[0] = std::int64_t{3} << 30;
      REQUIRE_FALSE(codegen::index_fits_int32(f));
      graph::FormatArray step = test::int_array("I8", {});
      step.model.kind = graph::ArrayModel::Kind::Packed;
      f.parts[p].arrays["nz_row_delta"] = step;
      REQUIRE(codegen::index_fits_int32(f));
    }
    // Tensor-core bit masks are bits, not indices: all 32 of them set is fine.
    for (std::size_t p = 0; p < e.format.parts.size(); ++p) {
      if (!e.format.parts[p].has(graph::Arr::tc_bit) ||
          e.format.parts[p].array(graph::Arr::tc_bit).ints.empty())
        continue;
      auto f = e.format;
      f.parts[p].arrays.at("tc_bit").ints[0] = 0xffffffffLL;
      REQUIRE(codegen::index_fits_int32(f));
      ++masks;
    }
  }
  CHECK(masks >= 1);
  CHECK(modelled >= 5);  // the known formats model some arrays by linear formulas
}
