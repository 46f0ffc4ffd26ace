#include "runtime/bench.hpp"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>

#include "core/error.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/nvrtc.hpp"
#include "runtime/problem_file.hpp"
#include "runtime/sptv_kernel.hpp"

namespace sparsetune::runtime {

namespace {
// A private temporary folder, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "sparsetune-bench-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw Error("cannot create a temporary folder in " + tmpl);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

BenchReport run(const std::filesystem::path& problem, const TempDir& dir, const BenchOptions& o,
                std::int64_t rows, std::int64_t cols, std::int64_t nnz) {
  if (o.runs < 1) throw Error("--runs must be at least 1");
  if (o.op == "spmm")
    for (auto n : o.n)
      if (n < 1) throw Error("--n must be at least 1");
  BenchReport rep;
  rep.op = o.op;
  rep.rows = rows;
  rep.cols = cols;
  rep.nnz = nnz;
  Worker w(o.launch);
  const auto dev = w.call({{"job", "device"}, {"bandwidth", true}}, o.timeout_s);
  if (!dev.ok) throw Error(dev.error + ": bench needs a GPU");
  rep.device = device_model_from_json(dev.body.at("device"));

  nlohmann::json load = {{"job", "load"},  {"path", problem.string()},
                         {"op", o.op},     {"dtype", dtype_name(o.dtype)},
                         {"seed", o.seed}, {"mode", o.mode}};
  if (o.op == "sptv") {
    // The parent compiles; the worker only loads and launches.
    KernelCache cache;
    const auto c = compile({"sptv_coo_atomic", sptv_coo_atomic_source()},
                           CompileOptions{rep.device.arch, {"-std=c++17"}}, &cache);
    const auto cubin = dir.path() / "sptv_coo_atomic.cubin";
    write_file_atomic(cubin, c.cubin.data(), c.cubin.size());
    load["sptv_cubin"] = cubin.string();
  }

  bool loaded = false;
  const std::vector<std::int64_t> ns = o.op == "spmm" ? o.n : std::vector<std::int64_t>{1};
  for (const auto& name : baseline_names(o.op))
    for (auto n : ns) {
      BaselineResult r;
      r.name = name;
      r.n = n;
      r.dtype = dtype_name(o.dtype);
      if (!loaded) {
        const auto l = w.call(load, o.timeout_s);
        if (!l.ok && !l.worker_lost) throw Error("worker cannot load the problem: " + l.error);
        loaded = l.ok;
        if (!loaded) {
          r.status = "failed";
          r.note = "loading: " + l.error;
          rep.results.push_back(r);
          continue;
        }
      }
      const auto b =
          w.call({{"job", "baseline"}, {"name", name}, {"n", n}, {"runs", o.runs}}, o.timeout_s);
      if (b.ok) {
        r = baseline_from_json(b.body.at("result"), rep.device.bandwidth_gbs);
      } else {
        r.status = "failed";
        r.note = b.error;
      }
      if (b.worker_lost) loaded = false;  // a fresh worker must load the problem again
      rep.results.push_back(r);
    }
  rep.worker_starts = w.starts();
  return rep;
}
}  // namespace

std::vector<std::string> baseline_names(const std::string& op) {
  if (op == "spmv")
    return {"csr-alg1", "csr-alg2", "coo-alg1", "coo-alg2", "sell-alg1", "bsr-alg1"};
  if (op == "spmm")
    return {"csr-alg1", "csr-alg2", "csr-alg3", "coo-alg4", "blocked-ell", "bsr-alg1"};
  if (op == "sptv") return {"unfold-csr-alg1", "unfold-csr-alg2", "coo-atomic"};
  throw Error("unknown operation '" + op + "' (expected spmv, spmm or sptv)");
}

BenchReport bench_matrix(const Csr64& a, const BenchOptions& opts) {
  if (opts.op != "spmv" && opts.op != "spmm")
    throw Error("a matrix takes --op spmv or --op spmm, not " + opts.op);
  TempDir dir;
  const auto path = dir.path() / "problem.safetensors";
  write_problem(path, a);
  return run(path, dir, opts, a.rows, a.cols, a.nnz());
}

BenchReport bench_tensor(const SparseTensor& t, const BenchOptions& opts) {
  if (opts.op != "sptv") throw Error("a tensor takes --op sptv, not " + opts.op);
  if (opts.mode < 0 || opts.mode >= t.order())
    throw Error("--mode " + std::to_string(opts.mode) + " out of range for an order-" +
                std::to_string(t.order()) + " tensor");
  TempDir dir;
  const auto path = dir.path() / "problem.safetensors";
  write_problem(path, t);
  auto rep = run(path, dir, opts, t.dims[opts.mode], 0, t.nnz());
  rep.dims = t.dims;
  rep.mode = opts.mode;
  return rep;
}

DeviceModel device_model_from_json(const nlohmann::json& j) {
  DeviceModel d;
  d.name = j.value("name", std::string());
  d.arch = j.value("arch", std::string());
  d.sms = j.value("sms", 0);
  d.l2_bytes = j.value("l2_bytes", std::int64_t{0});
  d.smem_per_block = j.value("smem_per_block_optin", std::int64_t{0});
  d.smem_per_sm = j.value("smem_per_sm", std::int64_t{0});
  d.memory_bytes = j.value("memory_bytes", std::int64_t{0});
  d.bandwidth_gbs = j.value("bandwidth_gbs", 0.0);
  return d;
}

BaselineResult baseline_from_json(const nlohmann::json& j, double bandwidth_gbs) {
  BaselineResult r;
  r.name = j.value("name", std::string());
  r.n = j.value("n", std::int64_t{1});
  r.dtype = j.value("dtype", std::string());
  r.status = j.value("status", std::string("failed"));
  r.verified = j.value("verified", false);
  r.error = j.contains("error") && j["error"].is_number() ? j["error"].get<double>() : -1.0;
  r.tolerance = j.value("tolerance", 0.0);
  // A time's statistics as baseline_json writes them.
  auto read_stats = [](const nlohmann::json& t, Stats& s) {
    s.median = t.value("median", 0.0);
    s.min = t.value("min", 0.0);
    s.max = t.value("max", 0.0);
    s.q1 = t.value("q1", 0.0);
    s.q3 = t.value("q3", 0.0);
    s.count = t.value("runs", std::int64_t{0});
  };
  if (j.contains("time_ms")) read_stats(j["time_ms"], r.time_ms);
  if (j.contains("warm")) r.warm = warm_from_json(j["warm"], bandwidth_gbs);
  r.preprocess_ms = j.value("preprocess_ms", -1.0);
  if (j.contains("with_transfers_ms") && j["with_transfers_ms"].is_object()) {
    const auto& t = j["with_transfers_ms"];
    read_stats(t, r.with_transfers_ms);
    r.h2d_bytes = t.value("h2d_bytes", std::int64_t{0});
    r.d2h_bytes = t.value("d2h_bytes", std::int64_t{0});
  }
  r.gflops = j.value("gflops", 0.0);
  r.gbs = j.value("gbs", 0.0);
  r.bandwidth_fraction = bandwidth_gbs > 0 ? r.gbs / bandwidth_gbs : 0.0;
  r.note = j.value("note", std::string());
  // A result whose output was not fully written, or is wrong, is never reported as verified.
  if (r.status == "ok" && !r.verified && r.note.empty()) r.note = "wrong result";
  return r;
}

WarmResult warm_from_json(const nlohmann::json& j, double bandwidth_gbs) {
  WarmResult w;
  if (!j.is_object()) return w;
  w.measured = true;
  w.median_us = j.value("median_us", 0.0);
  w.min_us = j.value("min_us", 0.0);
  w.max_us = j.value("max_us", 0.0);
  w.gflops = j.value("gflops", 0.0);
  w.gbs = j.value("gbs", 0.0);
  w.bandwidth_fraction = bandwidth_gbs > 0 ? w.gbs / bandwidth_gbs : 0.0;
  w.batches = j.value("batches", std::int64_t{0});
  w.runs_per_batch = j.value("runs_per_batch", std::int64_t{0});
  return w;
}

nlohmann::json to_json(const WarmResult& w) {
  if (!w.measured) return nullptr;
  return {{"median_us", w.median_us},
          {"min_us", w.min_us},
          {"max_us", w.max_us},
          {"gflops", w.gflops},
          {"gbs", w.gbs},
          {"bw_fraction", w.bandwidth_fraction > 0 ? nlohmann::json(w.bandwidth_fraction)
                                                   : nlohmann::json(nullptr)},
          {"batches", w.batches},
          {"runs_per_batch", w.runs_per_batch}};
}

double best_verified_gflops(const std::vector<BaselineResult>& results, bool warm) {
  double best = 0;
  for (const auto& b : results) {
    if (b.status != "ok" || !b.verified) continue;
    if (warm && !b.warm.measured) continue;
    best = std::max(best, warm ? b.warm.gflops : b.gflops);
  }
  return best;
}

nlohmann::json to_json(const BenchReport& r) {
  nlohmann::json j;
  j["op"] = r.op;
  j["rows"] = r.rows;
  j["cols"] = r.cols;
  j["nnz"] = r.nnz;
  if (!r.dims.empty()) {
    j["dims"] = r.dims;
    j["mode"] = r.mode;
  }
  j["worker_starts"] = r.worker_starts;
  j["device"] = {{"name", r.device.name},
                 {"arch", r.device.arch},
                 {"sms", r.device.sms},
                 {"l2_bytes", r.device.l2_bytes},
                 {"smem_per_block_optin", r.device.smem_per_block},
                 {"smem_per_sm", r.device.smem_per_sm},
                 {"memory_bytes", r.device.memory_bytes},
                 {"bandwidth_gbs", r.device.bandwidth_gbs}};
  j["results"] = nlohmann::json::array();
  for (const auto& b : r.results) {
    nlohmann::json e = {{"name", b.name},         {"n", b.n},
                        {"dtype", b.dtype},       {"status", b.status},
                        {"verified", b.verified}, {"note", b.note}};
    if (b.status == "ok") {
      e["error"] = b.error >= 0 ? nlohmann::json(b.error) : nlohmann::json(nullptr);
      e["tolerance"] = b.tolerance;
      auto stats = [](const Stats& t) {
        return nlohmann::json{{"median", t.median}, {"min", t.min}, {"max", t.max},
                              {"q1", t.q1},         {"q3", t.q3},   {"runs", t.count}};
      };
      e["time_ms"] = stats(b.time_ms);
      if (b.preprocess_ms >= 0) e["preprocess_ms"] = b.preprocess_ms;
      if (b.with_transfers_ms.count > 0) {
        e["with_transfers_ms"] = stats(b.with_transfers_ms);
        e["with_transfers_ms"]["h2d_bytes"] = b.h2d_bytes;
        e["with_transfers_ms"]["d2h_bytes"] = b.d2h_bytes;
      }
      e["gflops"] = b.gflops;
      e["gbs"] = b.gbs;
      e["bandwidth_fraction"] = b.bandwidth_fraction;
      e["warm"] = to_json(b.warm);
    }
    j["results"].push_back(e);
  }
  return j;
}

}  // namespace sparsetune::runtime
