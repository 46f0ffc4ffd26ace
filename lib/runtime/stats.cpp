#include "runtime/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/reference.hpp"

namespace sparsetune::runtime {

namespace {
// Percentile p in [0, 1] of sorted samples, interpolating linearly between neighbours.
double percentile(const std::vector<double>& s, double p) {
  const double pos = p * static_cast<double>(s.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (pos - static_cast<double>(lo)) * (s[hi] - s[lo]);
}
}  // namespace

Stats summarize(std::vector<double> samples) {
  if (samples.empty()) throw Error("no timing samples to summarize");
  for (double v : samples)
    if (!std::isfinite(v)) throw Error("a timing sample is not a finite number");
  std::sort(samples.begin(), samples.end());
  Stats s;
  s.count = static_cast<std::int64_t>(samples.size());
  s.min = samples.front();
  s.max = samples.back();
  s.median = percentile(samples, 0.5);
  s.q1 = percentile(samples, 0.25);
  s.q3 = percentile(samples, 0.75);
  return s;
}

std::int64_t warm_runs_per_batch(std::int64_t runs, double flushed_median_ms, int batches) {
  if (runs < 1) return 1;
  const double per_batch = kWarmBudgetMs / std::max(batches, 1);
  if (!(flushed_median_ms * static_cast<double>(runs) > per_batch)) return runs;  // NaN: runs
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(per_batch / flushed_median_ms), 1,
                                  runs);
}

WarmStats summarize_warm(const std::vector<double>& batch_times, std::int64_t runs_per_batch) {
  if (runs_per_batch < 1) throw Error("a warm batch needs at least one run");
  if (batch_times.empty()) throw Error("no warm batches to summarize");
  std::vector<double> per_run;
  per_run.reserve(batch_times.size());
  for (double t : batch_times) per_run.push_back(t / static_cast<double>(runs_per_batch));
  WarmStats w;
  w.per_run = summarize(std::move(per_run));
  w.runs_per_batch = runs_per_batch;
  return w;
}

DType parse_dtype(const std::string& name) {
  if (name == "f16") return DType::f16;
  if (name == "f32") return DType::f32;
  if (name == "f64") return DType::f64;
  throw Error("unknown data type '" + name + "' (expected f16, f32 or f64)");
}

std::string dtype_name(DType t) {
  switch (t) {
    case DType::f16:
      return "f16";
    case DType::f32:
      return "f32";
    case DType::f64:
      return "f64";
  }
  return "?";
}

int dtype_bytes(DType t) { return t == DType::f16 ? 2 : t == DType::f32 ? 4 : 8; }

double unit_roundoff(DType t) {
  return t == DType::f16   ? std::ldexp(1.0, -11)
         : t == DType::f32 ? std::ldexp(1.0, -24)
                           : std::ldexp(1.0, -53);
}

OpCost spmv_cost(std::int64_t rows, std::int64_t cols, std::int64_t nnz, int idx_bytes,
                 int val_bytes) {
  OpCost c;
  c.flops = 2.0 * static_cast<double>(nnz);
  c.bytes = static_cast<double>(rows + 1) * idx_bytes +
            static_cast<double>(nnz) * (idx_bytes + val_bytes) +
            static_cast<double>(cols) * val_bytes + static_cast<double>(rows) * val_bytes;
  return c;
}

OpCost spmm_cost(std::int64_t rows, std::int64_t cols, std::int64_t nnz, std::int64_t n,
                 int idx_bytes, int val_bytes, int out_bytes) {
  if (out_bytes <= 0) out_bytes = val_bytes;
  OpCost c;
  c.flops = 2.0 * static_cast<double>(nnz) * static_cast<double>(n);
  c.bytes = static_cast<double>(rows + 1) * idx_bytes +
            static_cast<double>(nnz) * (idx_bytes + val_bytes) +
            static_cast<double>(cols) * static_cast<double>(n) * val_bytes +
            static_cast<double>(rows) * static_cast<double>(n) * out_bytes;
  return c;
}

OpCost sptv_cost(int order, std::int64_t nnz, std::int64_t mode_dim, std::int64_t fibers,
                 int idx_bytes, int val_bytes) {
  OpCost c;
  c.flops = 2.0 * static_cast<double>(nnz);
  c.bytes = static_cast<double>(nnz) * (order * idx_bytes + val_bytes) +
            static_cast<double>(mode_dim) * val_bytes + static_cast<double>(fibers) * val_bytes;
  return c;
}

double gflops(const OpCost& c, double seconds) {
  return seconds > 0.0 ? c.flops / seconds * 1e-9 : 0.0;
}

double gbytes_per_s(const OpCost& c, double seconds) {
  return seconds > 0.0 ? c.bytes / seconds * 1e-9 : 0.0;
}

double error_tolerance(DType t, std::int64_t max_len) {
  const double floor = t == DType::f16 ? 1e-2 : t == DType::f32 ? 1e-5 : 1e-12;
  const double len = static_cast<double>(std::max<std::int64_t>(max_len, 1));
  // f16 data is accumulated in f32 (cuSPARSE's compute type) and rounded to f16 once at the end.
  const double acc = unit_roundoff(t == DType::f16 ? DType::f32 : t);
  const double store = t == DType::f16 ? 2.0 * unit_roundoff(t) : 0.0;
  return std::max(floor, store + 16.0 * std::sqrt(len) * acc);
}

double error_tolerance_tf32(std::int64_t max_len) {
  const double len = static_cast<double>(std::max<std::int64_t>(max_len, 1));
  return 16.0 * std::sqrt(len) * std::ldexp(1.0, -11);
}

bool OutputCheck::verified() const {
  return unwritten == 0 && specials_wrong == 0 && std::isfinite(error) && error <= tolerance;
}

OutputCheck check_output(const std::vector<double>& y, const std::vector<double>& ref,
                         double tolerance) {
  OutputCheck c;
  c.tolerance = tolerance;
  if (y.size() != ref.size()) {
    c.error = std::numeric_limits<double>::quiet_NaN();
    return c;
  }
  // Where the reference itself is NaN or infinite (x holding them), y must match it exactly; the
  // error is measured over the finite rest.
  std::vector<double> fy, fr;
  bool specials = false;
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (std::isfinite(ref[i])) {
      c.unwritten += std::isnan(y[i]) ? 1 : 0;
      continue;
    }
    specials = true;
    const bool same = std::isnan(ref[i]) ? std::isnan(y[i]) : y[i] == ref[i];
    c.specials_wrong += same ? 0 : 1;
  }
  if (!specials) {
    c.error = relative_l2_error(y, ref);
    return c;
  }
  for (std::size_t i = 0; i < y.size(); ++i)
    if (std::isfinite(ref[i])) fy.push_back(y[i]), fr.push_back(ref[i]);
  c.error = relative_l2_error(fy, fr);
  return c;
}

nlohmann::json result_json(const OutputCheck& check, const Stats& t, const OpCost& cost,
                           const std::string& note) {
  const double s = t.median * 1e-3;
  return {{"status", "ok"},
          {"verified", check.verified()},
          {"error", std::isfinite(check.error) ? nlohmann::json(check.error) : nlohmann::json()},
          {"tolerance", check.tolerance},
          {"unwritten", check.unwritten},
          {"specials_wrong", check.specials_wrong},
          {"time_ms",
           {{"median", t.median},
            {"min", t.min},
            {"max", t.max},
            {"q1", t.q1},
            {"q3", t.q3},
            {"runs", t.count}}},
          {"gflops", gflops(cost, s)},
          {"gbs", gbytes_per_s(cost, s)},
          {"flops", cost.flops},
          {"bytes", cost.bytes},
          {"note", note}};
}

nlohmann::json result_json(const OutputCheck& check, const Stats& time_ms, const WarmStats& warm_ms,
                           const OpCost& cost, const std::string& note) {
  nlohmann::json j = result_json(check, time_ms, cost, note);
  j["warm"] = warm_json(warm_ms, cost);
  return j;
}

nlohmann::json warm_json(const WarmStats& w, const OpCost& cost) {
  const double s = w.per_run.median * 1e-3;
  return {{"median_us", w.per_run.median * 1e3}, {"min_us", w.per_run.min * 1e3},
          {"max_us", w.per_run.max * 1e3},       {"gflops", gflops(cost, s)},
          {"gbs", gbytes_per_s(cost, s)},        {"bw_fraction", nullptr},
          {"batches", w.per_run.count},          {"runs_per_batch", w.runs_per_batch}};
}

}  // namespace sparsetune::runtime
