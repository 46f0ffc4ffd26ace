#pragma once
// Running generated kernels in [gpu] tests: a case is a (graph, matrix, dtype, alpha/beta, x)
// designed and turned into a launch plan; run_cases compiles them all with NVRTC and runs each
// once in the measuring worker, which checks y against the fp64 reference.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "codegen/emit.hpp"
#include "codegen/launch_plan.hpp"
#include "graph/random_graph.hpp"
#include "io/safetensors.hpp"
#include "runtime/bench.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/nvrtc.hpp"
#include "runtime/worker.hpp"
#include "test_support.hpp"

namespace sparsetune::gpu_test {

inline runtime::WorkerLaunch self_launch() {
  return {{"/proc/self/exe", runtime::kWorkerSubcommand}};
}

struct Case {
  std::string what;
  codegen::SpmvPlan plan;
  std::string source;
  codegen::PlanInputs in;
};

struct CaseOptions {
  codegen::Scaling scaling;                // y = alpha A x + beta y
  const std::vector<double>* x = nullptr;  // else random from seed 7
  std::string note;                        // added to the case's description
  std::int64_t spmm_n = 1;                 // an SpMM graph's columns of B (random from seed 7)
  std::string layout = "row";              // SpMM: B and C row- or column-major ("col")
  bool split_words = false;                // 24-bit column words (graph::split_col_words)
  int index_bits = 0;  // the design's index width (64: 64-bit arrays and kernel index arithmetic)
};

// Designs every (graph, matrix, dtype) it can; returns how many were designed.
inline int add_case(std::vector<Case>& cases, const graph::Graph& g, const std::string& mname,
                    const Csr64& a, const std::string& dtype, const CaseOptions& co = {}) {
  codegen::EmitOptions opt;
  opt.design.dtype = dtype;
  opt.layout = co.layout;
  opt.optimizer.split_words = co.split_words;
  opt.design.index_bits = co.index_bits;
  codegen::Emitted e;
  try {
    e = codegen::generate(g, a, opt);
  } catch (const Error&) {
    return 0;  // a data rule this matrix breaks: not a kernel to run
  }
  Case c;
  c.what = (g.name.empty() ? graph::describe(g) : g.name) + " on " + mname + " (" + dtype + ")" +
           co.note;
  const bool spmm = e.format.op == "spmm";
  if (spmm) c.what += ", n = " + std::to_string(co.spmm_n) + (e.format.col_major() ? ", col" : "");
  c.plan = codegen::make_launch_plan(e.format, e.kernels, g.name, co.scaling, spmm ? co.spmm_n : 1);
  c.source = e.kernels.source;
  c.in =
      spmm ? codegen::spmm_plan_inputs(dtype, a, co.spmm_n, 7, e.format.col_major())
           : codegen::spmv_plan_inputs(dtype, a, co.x ? *co.x : codegen::plan_x(a.cols, dtype, 7));
  codegen::apply_scaling(c.in, dtype, co.scaling);
  cases.push_back(std::move(c));
  return 1;
}

// Compiles all cases in parallel, runs each once in the worker; every one must verify.
inline void run_cases(const std::vector<Case>& cases) {
  runtime::Worker w(self_launch());
  const auto dev = w.call({{"job", "device"}}, 60);
  REQUIRE(dev.ok);
  runtime::CompileOptions co;
  co.arch = dev.body.at("device").at("arch").get<std::string>();
  std::vector<runtime::CompileJob> jobs;
  for (const auto& c : cases) jobs.push_back({"case", c.source});  // the cache folds repeats
  const runtime::KernelCache cache;
  const auto compiled = runtime::compile_batch(jobs, co, &cache);
  testing::TempDir t("sparsetune-gpu-graph");
  int verified = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    INFO(c.what);
    REQUIRE(compiled[i].ok);
    const auto path = t.path / "plan.safetensors";
    io::write_safetensors(path.string(),
                          codegen::plan_file(c.plan, compiled[i].cubin, c.in.max_len, &c.in));
    const auto r = w.call({{"job", "plan"}, {"plan", path.string()}, {"runs", 1}}, 120);
    INFO(r.error);
    REQUIRE(r.ok);
    const auto res = runtime::baseline_from_json(r.body.at("result"), 0.0);
    INFO("error " << res.error << " tolerance " << res.tolerance << " " << res.note);
    CHECK(res.status == "ok");
    CHECK(res.verified);
    verified += res.verified ? 1 : 0;
  }
  CHECK(verified == static_cast<int>(cases.size()));
}

}  // namespace sparsetune::gpu_test
