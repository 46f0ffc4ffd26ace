// `sparsetune bench`: the cuSPARSE baselines of one matrix or tensor on the GPU, and the hidden
// `__worker` subcommand that measures them in a child process.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "cli.hpp"
#include "core/error.hpp"
#include "core/operand_checks.hpp"
#include "db/tuning_db.hpp"
#include "io/matrix_file.hpp"
#include "io/tensor_file.hpp"
#include "runtime/bench.hpp"
#include "runtime/worker.hpp"
#include "search/bench_record.hpp"
#include "search/tune.hpp"

namespace sparsetune::cli {

namespace {

void print_report(const runtime::BenchReport& r) {
  std::printf("device: %s (%s, %d SMs, L2 %lld KiB), measured bandwidth %.0f GB/s\n",
              r.device.name.c_str(), r.device.arch.c_str(), r.device.sms,
              static_cast<long long>(r.device.l2_bytes >> 10), r.device.bandwidth_gbs);
  if (r.dims.empty()) {
    std::printf("%s: %lld x %lld, %lld non-zeros\n", r.op.c_str(), static_cast<long long>(r.rows),
                static_cast<long long>(r.cols), static_cast<long long>(r.nnz));
  } else {
    std::string dims;
    for (auto d : r.dims) dims += (dims.empty() ? "" : " x ") + std::to_string(d);
    std::printf("%s: tensor %s, %lld non-zeros, mode %d\n", r.op.c_str(), dims.c_str(),
                static_cast<long long>(r.nnz), r.mode);
  }
  // Flushed: each run timed alone after an L2 flush (what rankings use). Warm: back-to-back runs.
  std::vector<std::vector<std::string>> rows = {
      {"baseline", "n", "dtype", "flushed us", "min..max us", "warm us", "prep ms", "GFLOP/s",
       "GB/s", "of bw", "warm of bw", "rel. error", "verified", "note"}};
  for (const auto& b : r.results) {
    if (b.status != "ok") {
      rows.push_back({b.name, std::to_string(b.n), b.dtype, "-", "-", "-", "-", "-", "-", "-", "-",
                      "-", b.status, b.note});
      continue;
    }
    const auto& w = b.warm;
    rows.push_back({b.name, std::to_string(b.n), b.dtype, fixed(b.time_ms.median * 1e3, 2),
                    fixed(b.time_ms.min * 1e3, 2) + ".." + fixed(b.time_ms.max * 1e3, 2),
                    w.measured ? fixed(w.median_us, 2) : "-",
                    b.preprocess_ms >= 0 ? fixed(b.preprocess_ms, 3) : "-", fixed(b.gflops, 1),
                    fixed(b.gbs, 1), fixed(100.0 * b.bandwidth_fraction, 1) + "%",
                    w.measured ? fixed(100.0 * w.bandwidth_fraction, 1) + "%" : "-",
                    b.error >= 0 ? sci(b.error, 1) : "nan", b.verified ? "yes" : "NO", b.note});
  }
  print_table(rows);
}
}  // namespace

void add_bench_command(CLI::App& app, const GlobalOptions& g) {
  struct Args {
    std::string file, op = "spmv", dtype = "f32", db;
    std::vector<std::int64_t> n = {32};
    int mode = 0, runs = 20;
    std::uint64_t seed = 1;
    double timeout = 600;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("bench", "Measure the cuSPARSE baselines of a matrix or tensor");
  cmd->add_option(
         "file", args->file,
         "Matrix (.mtx, .mtx.gz, .safetensors) or, for sptv, tensor (.tns, .tns.gz, .safetensors)")
      ->required();
  cmd->add_option("--op", args->op, "spmv, spmm or sptv")
      ->check(CLI::IsMember({"spmv", "spmm", "sptv"}));
  cmd->add_option("--n", args->n, "SpMM dense columns (several allowed)")->expected(1, 16);
  cmd->add_option("--mode", args->mode, "SpTV mode");
  cmd->add_option("--dtype", args->dtype, "f32, f64 or f16")
      ->check(CLI::IsMember({"f16", "f32", "f64"}));
  cmd->add_option("--runs", args->runs, "Timed runs per baseline (median and spread)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--seed", args->seed, "Seed of the random dense inputs");
  cmd->add_option("--db", args->db,
                  "Also record every result in this tuning database (for sparsetune report)");
  cmd->add_option("--timeout", args->timeout, "Seconds a baseline may take before it is killed")
      ->check(kPositive);
  cmd->callback([args, cmd, &g] {
    // Options of another op would be ignored: refused, as tune refuses them.
    if (cmd->count("--n") && args->op != "spmm")
      throw Error("bench: --n is the columns of B, for --op spmm only (got --op " + args->op + ")");
    if (cmd->count("--mode") && args->op != "sptv")
      throw Error("bench: --mode is the tensor mode, for --op sptv only (got --op " + args->op +
                  ")");
    runtime::BenchOptions o;
    o.op = args->op;
    o.n = args->n;
    o.mode = args->mode;
    o.dtype = runtime::parse_dtype(args->dtype);
    o.runs = args->runs;
    o.seed = args->seed;
    o.timeout_s = args->timeout;
    if (!args->db.empty() && o.op == "sptv")
      throw Error("bench: --db records matrices (spmv, spmm); sptv results are not recorded");
    runtime::BenchReport report;
    if (o.op == "sptv") {
      report = runtime::bench_tensor(io::read_tensor(args->file), o);
    } else {
      const Csr64 a = io::read_matrix(args->file);
      double widest = 1;
      for (const auto n : o.n) widest = std::max(widest, static_cast<double>(n));
      check_dense_operands(static_cast<double>(a.rows), static_cast<double>(a.cols),
                           o.op == "spmm" ? widest : 1.0, args->dtype, args->file);
      // A database that exists is opened (and checked) first; a new one is created only once
      // there is something to record, so a failed bench leaves none behind.
      std::optional<db::TuningDb> db;
      if (!args->db.empty() && std::filesystem::exists(args->db)) db.emplace(args->db);
      report = runtime::bench_matrix(a, o);
      if (!args->db.empty() && !db) db.emplace(args->db);
      if (db) search::record_bench(*db, search::matrix_name(args->file), a, report);
    }
    if (g.json) return print_json(runtime::to_json(report));
    print_report(report);
  });

  // Hidden: the measuring worker, started by bench itself over a socket (see runtime/worker.hpp).
  auto fd = std::make_shared<int>(-1);
  auto* worker = app.add_subcommand(runtime::kWorkerSubcommand, "");
  worker->group("");
  worker->add_option("--fd", *fd)->required();
  worker->callback([fd] { std::exit(runtime::worker_serve(*fd)); });
}

}  // namespace sparsetune::cli
