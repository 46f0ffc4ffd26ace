// Launch plans: the file round trip and the checks that keep a malformed plan from the GPU.
#include "runtime/launch_plan.hpp"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "test_support.hpp"

using namespace sparsetune;
using namespace sparsetune::runtime;
namespace fs = std::filesystem;

namespace {

template <class T>
PlanBuffer buffer(const char* dtype, const std::vector<T>& v) {
  PlanBuffer b{dtype, std::vector<char>(v.size() * sizeof(T))};
  if (!v.empty()) std::memcpy(b.bytes.data(), v.data(), b.bytes.size());
  return b;
}

LaunchPlan small_plan() {
  LaunchPlan p;
  p.name = "two-kernels";
  p.buffers["p0.nz_val"] = buffer<float>("F32", {1.5f, -2.f, 3.f});
  p.buffers["p0.nz_col"] = buffer<std::int16_t>("I16", {0, 2, 1});
  p.buffers["x"] = buffer<float>("F32", {1.f, 2.f, 3.f});
  p.buffers["y_ref"] = buffer<double>("F64", {-4.5, 6.0});
  p.cubin = {'\x7f', 'E', 'L', 'F', '\0', '\1'};
  PlanLaunch a;
  a.kernel = "part0";
  a.grid[0] = 7;
  a.block[0] = 128;
  a.shared_bytes = 512;
  a.args = {{PlanArg::Kind::Buffer, "x"},         {PlanArg::Kind::Buffer, "y"},
            {PlanArg::Kind::Buffer, "p0.nz_col"}, {PlanArg::Kind::Buffer, "p0.nz_val"},
            {PlanArg::Kind::I32, "", -3},         {PlanArg::Kind::I64, "", 1LL << 40},
            {PlanArg::Kind::F32, "", 0, 0.25},    {PlanArg::Kind::F64, "", 0, -1e300}};
  PlanLaunch b = a;
  b.kernel = "part1";
  b.grid[1] = 3;
  p.launches = {a, b};
  p.output_length = 2;
  p.zero_output = true;
  p.max_len = 2;
  p.rows = 2;
  p.cols = 3;
  p.nnz = 3;
  return p;
}

}  // namespace

TEST_CASE("a launch plan survives its file", "[runtime][plan]") {
  testing::TempDir t("sparsetune-plan");
  const LaunchPlan p = small_plan();
  write_plan(t.path / "plan.safetensors", p);
  const LaunchPlan q = read_plan(t.path / "plan.safetensors");
  CHECK(plan_to_json(q) == plan_to_json(p));
  CHECK(q.cubin == p.cubin);
  REQUIRE(q.buffers.size() == p.buffers.size());
  for (const auto& [name, b] : p.buffers) {
    CHECK(q.buffers.at(name).dtype == b.dtype);
    CHECK(q.buffers.at(name).bytes == b.bytes);
  }
  CHECK(q.launches[1].grid[1] == 3);
  CHECK(q.launches[0].args[5].i == (1LL << 40));
  CHECK(q.launches[0].args[7].f == -1e300);
}

TEST_CASE("inputs shared by many plans come from their own file", "[runtime][plan]") {
  testing::TempDir t("sparsetune-plan");
  LaunchPlan p = small_plan();
  std::map<std::string, PlanBuffer> inputs = {{"x", p.buffers.at("x")},
                                              {"y_ref", p.buffers.at("y_ref")}};
  p.buffers.erase("x");
  p.buffers.erase("y_ref");
  write_plan_buffers(t.path / "inputs.safetensors", inputs);
  write_plan(t.path / "plan.safetensors", p);
  // Without the inputs the plan is incomplete.
  CHECK_THROWS_AS(read_plan(t.path / "plan.safetensors"), Error);
  const LaunchPlan q = read_plan(t.path / "plan.safetensors", {t.path / "inputs.safetensors"});
  CHECK(q.buffers.at("x").bytes == inputs.at("x").bytes);
  CHECK(q.buffers.at("y_ref").bytes == inputs.at("y_ref").bytes);
}

TEST_CASE("malformed plans are refused", "[runtime][plan]") {
  LaunchPlan p = small_plan();
  CHECK_NOTHROW(validate_plan(p, "plan"));
  SECTION("missing buffer") {
    p.launches[0].args[2].buffer = "p0.nope";
    CHECK_THROWS_WITH(validate_plan(p, "plan"), Catch::Contains("missing buffer 'p0.nope'"));
  }
  SECTION("reference of the wrong length") {
    p.output_length = 3;
    CHECK_THROWS_WITH(validate_plan(p, "plan"), Catch::Contains("reference"));
  }
  SECTION("a partial element") {
    p.buffers["p0.nz_col"].bytes.pop_back();
    CHECK_THROWS_WITH(validate_plan(p, "plan"), Catch::Contains("whole number"));
  }
  SECTION("a stored output") {
    p.buffers["y"] = p.buffers["y_ref"];
    CHECK_THROWS_WITH(validate_plan(p, "plan"), Catch::Contains("must not be stored"));
  }
  SECTION("unknown dtypes") {
    p.buffers["x"].dtype = "Q7";
    CHECK_THROWS_AS(validate_plan(p, "plan"), Error);
  }
  SECTION("bad grids and argument kinds in the JSON") {
    auto j = plan_to_json(p);
    j["launches"][0]["grid"] = {0, 1, 1};
    CHECK_THROWS_WITH(plan_from_json(j, "plan"), Catch::Contains("out of range"));
    j = plan_to_json(p);
    j["launches"][0]["args"][0] = {{"u8", 3}};
    CHECK_THROWS_WITH(plan_from_json(j, "plan"), Catch::Contains("unknown argument kind"));
    j = plan_to_json(p);
    j.erase("output");
    CHECK_THROWS_AS(plan_from_json(j, "plan"), Error);
  }
}

TEST_CASE("a truncated plan file is an error, not a crash", "[runtime][plan]") {
  testing::TempDir t("sparsetune-plan");
  write_plan(t.path / "plan.safetensors", small_plan());
  const auto size = fs::file_size(t.path / "plan.safetensors");
  for (std::uintmax_t cut : {std::uintmax_t{0}, std::uintmax_t{5}, std::uintmax_t{40}, size - 1}) {
    fs::resize_file(t.path / "plan.safetensors", cut);
    CHECK_THROWS_AS(read_plan(t.path / "plan.safetensors"), Error);
    write_plan(t.path / "plan.safetensors", small_plan());
  }
  CHECK_THROWS_AS(read_plan(t.path / "missing.safetensors"), Error);
}

TEST_CASE("SpMM plans: B and C of n columns, checked against the shape", "[runtime][plan]") {
  LaunchPlan p = small_plan();  // 2 x 3
  p.op = "spmm";
  p.n = 2;
  p.buffers["x"] = buffer<float>("F32", {1.f, 2.f, 3.f, 4.f, 5.f, 6.f});  // B: 3 x 2
  p.buffers["y_ref"] = buffer<double>("F64", {1.0, 2.0, 3.0, 4.0});       // C: 2 x 2
  p.output_length = 4;
  CHECK_NOTHROW(validate_plan(p, "plan"));
  // The cost travels with the plan file.
  const auto j = plan_to_json(p);
  CHECK(j["cost"]["op"] == "spmm");
  CHECK(j["cost"]["n"] == 2);
  const auto q = plan_from_json(j, "plan");
  CHECK(q.op == "spmm");
  CHECK(q.n == 2);
  SECTION("C of the wrong size") {
    p.output_length = 2;
    p.buffers["y_ref"] = buffer<double>("F64", {1.0, 2.0});
    CHECK_THROWS_WITH(validate_plan(p, "plan"), Catch::Contains("not rows x n = 4"));
  }
  SECTION("B of the wrong size") {
    p.buffers["x"] = buffer<float>("F32", {1.f, 2.f, 3.f});
    CHECK_THROWS_WITH(validate_plan(p, "plan"), Catch::Contains("not cols x n = 6"));
  }
  SECTION("n with SpMV, or an unknown op") {
    p.op = "spmv";
    CHECK_THROWS_WITH(validate_plan(p, "plan"), Catch::Contains("n = 2 for spmv"));
    p.op = "spgemm";
    CHECK_THROWS_WITH(validate_plan(p, "plan"), Catch::Contains("op must be spmv or spmm"));
  }
}
