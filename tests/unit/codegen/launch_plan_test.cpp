// Launch plans of generated kernels: each launch's arguments are exactly the parameters the
// kernel declares (parsed out of the generated source), buffers carry the dtypes the parameters
// expect, the file reads back through the runtime, and the reference is right.
#include "codegen/launch_plan.hpp"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <random>
#include <sstream>

#include "../graph/graph_test_util.hpp"
#include "codegen/emit.hpp"
#include "codegen_test_util.hpp"
#include "core/reference.hpp"
#include "gen/scenarios.hpp"
#include "graph/random_graph.hpp"
#include "runtime/launch_plan.hpp"
#include "test_support.hpp"

using namespace sparsetune;
namespace fs = std::filesystem;

namespace {

struct Param {
  std::string type, name;
};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \n"), e = s.find_last_not_of(" \n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// The parameter list of `kernel` as the source declares it: "const int* __restrict__ p_nz_col"
// becomes {"const int*", "p_nz_col"}.
std::vector<Param> parse_signature(const std::string& src, const std::string& kernel) {
  const std::string head = ")\n" + kernel + "(";
  const auto at = src.find(head);
  REQUIRE(at != std::string::npos);
  const auto open = at + head.size();
  const auto close = src.find(") {", open);
  REQUIRE(close != std::string::npos);
  std::vector<Param> out;
  std::stringstream list(src.substr(open, close - open));
  for (std::string item; std::getline(list, item, ',');) {
    item = trim(item);
    const auto restrict_at = item.find(" __restrict__ ");
    if (restrict_at == std::string::npos) {  // a scalar: "const st_acc_t alpha"
      const auto space = item.rfind(' ');
      REQUIRE(space != std::string::npos);
      out.push_back({trim(item.substr(0, space)), trim(item.substr(space + 1))});
      continue;
    }
    out.push_back({trim(item.substr(0, restrict_at)), trim(item.substr(restrict_at + 14))});
  }
  return out;
}

// The C type a buffer of this dtype must be passed as.
std::string expected_type(const std::string& dtype, bool value) {
  if (value) return "const st_val_t*";
  if (dtype == "I8") return "const signed char*";
  if (dtype == "I16") return "const short*";
  if (dtype == "I32") return "const int*";
  if (dtype == "I64") return "const long long*";
  return "?";
}

const io::NamedArray* find_array(const codegen::SpmvPlan& p, const std::string& name) {
  return p.arrays.find(name);
}

void check_plan_matches_source(const codegen::Emitted& e, const codegen::SpmvPlan& plan) {
  const std::string& src = e.kernels.source;
  // The typedefs of the prelude decide what x and y are.
  const std::string val = plan.x_dtype == "F64"   ? "double"
                          : plan.x_dtype == "F32" ? "float"
                                                  : "unsigned short";
  const std::string acc = plan.y_dtype == "F64" ? "double" : "float";
  REQUIRE(src.find("typedef " + val + " st_val_t;") != std::string::npos);
  REQUIRE(src.find("typedef " + acc + " st_acc_t;") != std::string::npos);
  const std::string scalar = plan.y_dtype == "F64" ? "f64" : "f32";
  // An adding format with beta != 0 first scales y: (y, n, beta).
  const bool scales = e.format.scales_output_first() && plan.scaling.beta != 0.0;
  REQUIRE(plan.launches.size() == e.kernels.kernels.size() + (scales ? 1 : 0));
  if (scales) {
    const auto& launch = plan.launches.front();
    CHECK(launch.kernel == codegen::kScaleKernel);
    CHECK(e.kernels.scale_kernel == codegen::kScaleKernel);
    const auto params = parse_signature(src, launch.kernel);
    REQUIRE(params.size() == 3);
    REQUIRE(launch.args.size() == 3);
    CHECK(launch.args[0] == "y");
    CHECK(params[0].type == "st_acc_t*");
    CHECK(launch.args[1].scalar == "i64");
    CHECK(launch.args[1].i == plan.rows);
    CHECK(params[1].type == "const long long");
    CHECK(launch.args[2].scalar == scalar);
    CHECK(launch.args[2].f == plan.scaling.beta);
    CHECK(params[2].name == "beta");
    CHECK(launch.grid * launch.block >= std::min<std::int64_t>(plan.rows, 65536 * 256));
  }
  for (std::size_t l = scales ? 1 : 0; l < plan.launches.size(); ++l) {
    const auto& launch = plan.launches[l];
    INFO(launch.kernel);
    CHECK(launch.kernel == e.kernels.kernels[l - (scales ? 1 : 0)]);
    const auto params = parse_signature(src, launch.kernel);
    REQUIRE(params.size() == launch.args.size());
    REQUIRE(params.size() >= 4);
    CHECK(launch.args[0] == "x");
    CHECK(params[0].name == "x");
    CHECK(params[0].type == "const st_val_t*");
    CHECK(launch.args[1] == "y");
    CHECK(params[1].name == "y");
    CHECK(params[1].type == "st_acc_t*");
    CHECK(params[2].name == "alpha");
    CHECK(params[2].type == "const st_acc_t");
    CHECK(launch.args[2].scalar == scalar);
    CHECK(launch.args[2].f == plan.scaling.alpha);
    CHECK(params[3].name == "beta");
    CHECK(params[3].type == "const st_acc_t");
    CHECK(launch.args[3].scalar == scalar);
    CHECK(launch.args[3].f == plan.scaling.beta);
    for (std::size_t i = 4; i < params.size(); ++i) {
      const std::string& buf = launch.args[i].buffer;
      REQUIRE(launch.args[i].scalar.empty());
      const auto dot = buf.find('.');
      REQUIRE(dot != std::string::npos);
      CHECK("p_" + buf.substr(dot + 1) == params[i].name);
      const io::NamedArray* a = find_array(plan, buf);
      REQUIRE(a);
      const bool value = buf.substr(dot + 1) == "nz_val";
      CHECK(expected_type(a->dtype, value) == params[i].type);
      if (value) CHECK(a->dtype == plan.x_dtype);
    }
    // The launch configuration is kernel.h's.
    CHECK(e.host_header.find(launch.kernel + "<<<" + std::to_string(launch.grid) + ", " +
                             std::to_string(launch.block) + ", 0, stream>>>") != std::string::npos);
  }
}

}  // namespace

TEST_CASE("plan arguments follow the generated kernel signatures", "[codegen][plan]") {
  const Csr64 a = test::random_matrix(21, 140, 110, 0.05);
  const Csr64 rect = test::random_matrix(22, 40, 260, 0.1, 0.1);
  for (const char* dtype : {"f64", "f32", "f16"})
    for (const auto& g : test::known_graphs())
      for (const Csr64* m : {&a, &rect}) {
        INFO(g.name << " " << dtype << " " << m->rows << "x" << m->cols);
        codegen::EmitOptions opt;
        opt.design.dtype = dtype;
        const auto e = codegen::generate(g, *m, opt);
        check_plan_matches_source(e, codegen::make_launch_plan(e.format, e.kernels, g.name));
        check_plan_matches_source(
            e, codegen::make_launch_plan(e.format, e.kernels, g.name, {-2.5, 0.75}));
      }
}

TEST_CASE("plan arguments follow the signatures of random graphs", "[codegen][plan]") {
  const Csr64 a = test::random_matrix(31, 120, 100, 0.06);
  std::mt19937_64 rng(2024);
  int built = 0;
  for (int i = 0; i < 200; ++i) {
    const auto g = graph::random_graph(rng);
    codegen::Emitted e;
    try {
      e = codegen::generate(g, a);
    } catch (const Error&) {
      continue;  // a data rule this matrix breaks
    }
    INFO(graph::describe(g));
    check_plan_matches_source(e, codegen::make_launch_plan(e.format, e.kernels));
    ++built;
  }
  CHECK(built >= 20);
}

TEST_CASE("a plan file reads back through the runtime", "[codegen][plan]") {
  testing::TempDir t("sparsetune-lplan");
  const Csr64 a = test::random_matrix(41, 90, 70, 0.07);
  const auto g = test::known_graphs().front();
  codegen::EmitOptions opt;
  opt.design.dtype = "f32";
  const auto e = codegen::generate(g, a, opt);
  const auto plan = codegen::make_launch_plan(e.format, e.kernels, g.name);
  const auto in = codegen::spmv_plan_inputs("f32", a, codegen::plan_x(a.cols, "f32", 5));
  const std::vector<char> cubin = {'c', 'u', 'b', 'i', 'n'};
  io::write_safetensors((t.path / "plan.safetensors").string(),
                        codegen::plan_file(plan, cubin, in.max_len));
  io::write_safetensors((t.path / "inputs.safetensors").string(),
                        codegen::plan_inputs_file("f32", in));
  const auto r = runtime::read_plan(t.path / "plan.safetensors", {t.path / "inputs.safetensors"});
  CHECK(r.cubin == cubin);
  CHECK(r.name == g.name);
  CHECK(r.zero_output == e.format.scales_output_first());
  CHECK(r.output == "y");
  CHECK(r.output_dtype == "F32");
  CHECK(r.output_length == a.rows);
  CHECK(r.check_dtype == "f32");
  CHECK(r.max_len == in.max_len);
  CHECK(r.nnz == a.nnz());
  CHECK(r.value_bytes == 4);
  CHECK(r.buffers.at("x").dtype == "F32");
  CHECK(r.buffers.at("x").bytes.size() == static_cast<std::size_t>(a.cols) * 4);
  REQUIRE(r.launches.size() == plan.launches.size());
  for (std::size_t l = 0; l < r.launches.size(); ++l) {
    CHECK(r.launches[l].kernel == plan.launches[l].kernel);
    CHECK(r.launches[l].grid[0] == plan.launches[l].grid);
    CHECK(r.launches[l].block[0] == static_cast<unsigned>(plan.launches[l].block));
    REQUIRE(r.launches[l].args.size() == plan.launches[l].args.size());
    for (std::size_t i = 0; i < r.launches[l].args.size(); ++i) {
      const auto& want = plan.launches[l].args[i];
      const auto& got = r.launches[l].args[i];
      if (want.scalar.empty()) {
        CHECK(got.kind == runtime::PlanArg::Kind::Buffer);
        CHECK(got.buffer == want.buffer);
      } else {
        CHECK(got.kind == runtime::PlanArg::Kind::F32);  // alpha and beta of an fp32 format
        CHECK(got.f == want.f);
      }
    }
  }
}

TEST_CASE("a plan with beta != 0 starts y from y_init and checks alpha A x + beta y",
          "[codegen][plan]") {
  testing::TempDir t("sparsetune-lplan-beta");
  const Csr64 a = test::random_matrix(43, 80, 60, 0.08);
  for (const auto& g : test::known_graphs()) {
    INFO(g.name);
    codegen::EmitOptions opt;
    opt.design.dtype = "f64";
    const auto e = codegen::generate(g, a, opt);
    const codegen::Scaling s{-1.5, 0.5};
    const auto plan = codegen::make_launch_plan(e.format, e.kernels, g.name, s);
    CHECK_FALSE(plan.zero_output);
    CHECK(plan.init_output);
    auto in = codegen::spmv_plan_inputs("f64", a, codegen::plan_x(a.cols, "f64", 7));
    const auto ax = spmv_reference(a, in.x);
    codegen::apply_scaling(in, "f64", s, 9);
    REQUIRE(in.y_init.size() == static_cast<std::size_t>(a.rows));
    for (std::int64_t i = 0; i < a.rows; ++i)
      CHECK(in.y_ref[i] == Approx(-1.5 * ax[i] + 0.5 * in.y_init[i]).margin(1e-14));
    const std::vector<char> cubin = {'c'};
    io::write_safetensors((t.path / "plan.safetensors").string(),
                          codegen::plan_file(plan, cubin, in.max_len, &in));
    const auto r = runtime::read_plan(t.path / "plan.safetensors");
    CHECK(r.output_init == "y_init");
    CHECK_FALSE(r.zero_output);
    REQUIRE(r.buffers.count("y_init"));
    CHECK(r.buffers.at("y_init").dtype == "F64");
    CHECK(r.buffers.at("y_init").bytes.size() == static_cast<std::size_t>(a.rows) * 8);
    // Without y_init the plan file refuses the inputs.
    codegen::PlanInputs no_init = in;
    no_init.y_init.clear();
    no_init.has_y_init = false;
    CHECK_THROWS_WITH(codegen::plan_file(plan, cubin, in.max_len, &no_init),
                      Catch::Contains("y_init is missing"));
  }
}

TEST_CASE("scenario list: plans with alpha and beta pass the runtime's validation",
          "[codegen][plan][scenarios]") {
  testing::TempDir t("sparsetune-lplan-scen");
  const auto path = t.path / "plan.safetensors";
  for (const auto& sc : gen::scenarios(2000))
    for (const auto& g : test::known_graphs()) {
      INFO(g.name << " on " << sc.name);
      codegen::Emitted e;
      try {
        e = codegen::generate(g, sc.a);
      } catch (const Error&) {
        continue;  // a data rule this matrix breaks
      }
      for (const codegen::Scaling s : {codegen::Scaling{}, codegen::Scaling{2.0, -0.5}}) {
        const auto plan = codegen::make_launch_plan(e.format, e.kernels, g.name, s);
        auto in = codegen::spmv_plan_inputs("f64", sc.a, codegen::plan_x(sc.a.cols, "f64", 3));
        codegen::apply_scaling(in, "f64", s);
        io::write_safetensors(path.string(), codegen::plan_file(plan, {'c'}, in.max_len, &in));
        const auto r = runtime::read_plan(path);  // validates
        CHECK(r.output_init == (s.beta != 0.0 ? "y_init" : ""));
        CHECK(r.zero_output == (e.format.scales_output_first() && s.beta == 0.0));
      }
    }
}

TEST_CASE("the reference from the matrix and from the format agree", "[codegen][plan]") {
  for (const auto& [name, m] : test::edge_matrices()) {
    if (m.rows == 0) continue;
    for (const char* dtype : {"f64", "f32"}) {
      INFO(name << " " << dtype);
      codegen::EmitOptions opt;
      opt.design.dtype = dtype;
      // The first known format (by name) this matrix can be designed for.
      codegen::Emitted e;
      bool designed = false;
      for (const auto& g : test::known_graphs()) {
        try {
          e = codegen::generate(g, m, opt);
          designed = true;
          break;
        } catch (const Error&) {
        }
      }
      REQUIRE(designed);
      const auto with = codegen::spmv_plan_inputs(dtype, m, codegen::plan_x(m.cols, dtype, 3));
      const auto without = codegen::spmv_plan_inputs(e.format, codegen::plan_x(m.cols, dtype, 3));
      CHECK(with.x == without.x);
      std::int64_t longest = 0;
      for (std::int64_t r = 0; r < m.rows; ++r) longest = std::max(longest, m.row_length(r));
      CHECK(with.max_len == longest);
      CHECK(without.max_len == longest);
      if (m.nnz() > 0) CHECK(relative_l2_error(without.y_ref, with.y_ref) < 1e-13);
      // x is rounded to the format's precision, and not all zero.
      bool nonzero = false;
      for (double v : with.x) {
        nonzero = nonzero || v != 0.0;
        if (std::string(dtype) == "f32") CHECK(static_cast<double>(static_cast<float>(v)) == v);
      }
      CHECK(nonzero);
    }
  }
  // A matrix of another shape is refused.
  const Csr64 a = test::random_matrix(5, 30, 30, 0.1);
  const auto e = codegen::generate(test::known_graphs().front(), a);
  CHECK_THROWS_AS(codegen::spmv_plan_inputs(e.format, std::vector<double>(31, 1.0)), Error);
  CHECK_THROWS_AS(codegen::spmv_plan_inputs("f64", a, std::vector<double>(29, 1.0)), Error);
}
