#include "search/evaluator.hpp"

#include <algorithm>

#include "codegen/optimizer.hpp"
#include "core/error.hpp"
#include "graph/designer.hpp"
#include "graph/format.hpp"
#include "runtime/stats.hpp"
#include "runtime/thread_pool.hpp"

namespace sparsetune::search {

void fail_with(Evaluation& e, const std::exception& ex, const std::string& prefix) {
  e.ok = false;
  e.failure = prefix + ex.what();
  e.category = failure_category(ex);
}

int value_bytes(const std::string& dtype) { return dtype == "f64" ? 8 : dtype == "f16" ? 2 : 4; }

void fill_rates(Evaluation& e, const Csr64& a, const std::string& dtype, std::int64_t n) {
  if (!(e.time_us > 0)) return;
  // SpMM's C is fp32 for f16 values (the kernels' result_t).
  const auto cost = n >= 1 ? runtime::spmm_cost(a.rows, a.cols, a.nnz(), n, 4, value_bytes(dtype),
                                                dtype == "f64" ? 8 : 4)
                           : runtime::spmv_cost(a.rows, a.cols, a.nnz(), 4, value_bytes(dtype));
  e.gflops = runtime::gflops(cost, e.time_us * 1e-6);
  e.gbs = runtime::gbytes_per_s(cost, e.time_us * 1e-6);
}

CostModelEvaluator::CostModelEvaluator(const Csr64& a, std::string dtype, models::DeviceSpec dev,
                                       std::int64_t spmm_n)
    : a_(a),
      sample_(sample_rows(a, kCostModelSampleNnz)),
      dtype_(std::move(dtype)),
      dev_(std::move(dev)),
      spmm_n_(std::max<std::int64_t>(1, spmm_n)) {}

Evaluation CostModelEvaluator::evaluate_one(const graph::Graph& g0) const {
  Evaluation e;
  try {
    graph::Graph g = g0;
    graph::validate(g, "candidate");
    graph::DesignOptions opt;
    opt.dtype = dtype_;
    const Csr64& s = sample_.matrix;
    graph::Format f = graph::design(g, s, opt);
    codegen::optimize(f);
    const auto m = graph::apply_graph(g, s);
    const std::int64_t n = g.op == "spmm" ? spmm_n_ : 0;  // the op is the graph's
    const auto c = models::estimate_cost(m, graph::stored_bytes(f), value_bytes(dtype_), dev_, n);
    e.ok = true;
    e.time_us = c.launch_us + (c.time_us - c.launch_us) * sample_.scale;
    // An adding format zeroes the whole output first, every row of the full matrix.
    const double pass_us = f.scales_output_first()
                               ? models::output_pass_us(a_.rows, n, dtype_ == "f64" ? 8 : 4, dev_)
                               : 0.0;
    e.time_us += pass_us;
    e.detail = {{"model_bytes", c.bytes},    {"memory_us", c.memory_us},
                {"issue_us", c.issue_us},    {"tail_us", c.tail_us},
                {"atomic_us", c.atomic_us},  {"launch_us", c.launch_us},
                {"output_pass_us", pass_us}, {"lane_efficiency", c.lane_efficiency},
                {"sample_rows", s.rows},     {"sample_scale", sample_.scale}};
    if (n >= 1) e.detail["n"] = n;
    fill_rates(e, a_, dtype_, n);
  } catch (const std::exception& ex) {
    fail_with(e, ex, "design: ");
  }
  return e;
}

std::vector<Evaluation> CostModelEvaluator::evaluate(const std::vector<Candidate>& batch) {
  // Candidates are independent and the sample is shared read-only: one per host thread.
  std::vector<Evaluation> out(batch.size());
  runtime::parallel_for(static_cast<std::int64_t>(batch.size()),
                        [&](std::int64_t i) { out[i] = evaluate_one(batch[i].graph); });
  return out;
}

}  // namespace sparsetune::search
