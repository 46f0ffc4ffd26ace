// `sparsetune run DIR`: compiles the kernels of an emitted folder (format.safetensors,
// kernel.cu) for the GPU, runs and times them in the measuring worker and checks y against the
// fp64 reference. Needs a GPU.
#include <cstdio>
#include <memory>

#include "cli.hpp"
#include "core/error.hpp"
#include "search/run_kernels.hpp"

namespace sparsetune::cli {

void add_run_command(CLI::App& app, const GlobalOptions& g) {
  auto* cmd = app.add_subcommand(
      "run", "Run the generated kernels of an emitted folder on the GPU, timed and verified");
  struct Args {
    std::string dir;
    search::RunOptions o;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("DIR", a->dir, "Folder written by emit-kernel or tune")->required();
  cmd->add_option("--x", a->o.x_file,
                  "x from a file: numbers, a Matrix Market array, or raw doubles (.f64)");
  cmd->add_option("--matrix", a->o.matrix_file,
                  "Check against this matrix (default: the format's own arrays)");
  cmd->add_option("--runs", a->o.runs, "Timed runs (median and spread)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--seed", a->o.seed, "Seed of the random x (or B)")->capture_default_str();
  cmd->add_option("--n", a->o.n,
                  "SpMM folders: the columns of the random B (default: the n in the folder's "
                  "report.json, else 16)")
      ->check(CLI::Range(std::int64_t{1}, search::kMaxRunN));
  cmd->add_option("--layout", a->o.layout,
                  "SpMM folders: row or col, the layout of B and C; checked against the layout "
                  "the kernels were generated for (default: the folder's)")
      ->check(CLI::IsMember({"row", "col"}));
  cmd->add_option("--alpha", a->o.alpha, "y = alpha A x + beta y")->capture_default_str();
  cmd->add_option("--beta", a->o.beta,
                  "y = alpha A x + beta y; y starts random (seed + 1) when beta is not 0")
      ->capture_default_str();
  cmd->add_option("--timeout", a->o.timeout_s, "Seconds the run may take before it is killed")
      ->check(kPositive)
      ->capture_default_str();
  cmd->callback([a, &g] {
    const auto r = search::run_emitted(a->dir, a->o);
    const auto& b = r.result;
    const bool right = b.status == "ok" && b.verified;
    if (g.json) {
      print_json(search::to_json(r));
      if (!right) throw Error("the kernels did not give the right answer");
      return;
    }
    std::vector<std::vector<std::string>> rows = {
        {"graph", r.graph.empty() ? "(unnamed)" : r.graph},
        {"matrix", std::to_string(r.rows) + " x " + std::to_string(r.cols) + ", " +
                       std::to_string(r.nnz) + " non-zeros, " + r.dtype},
        {"device", r.device.name + " (" + r.device.arch + "), measured bandwidth " +
                       fixed(r.device.bandwidth_gbs, 0) + " GB/s"},
        {"operation",
         r.op == "spmm" ? "C = " + fixed(r.alpha, 3) + " A B + " + fixed(r.beta, 3) + " C, B of " +
                              std::to_string(r.n) + " columns, " + r.layout + "-major"
                        : "y = " + fixed(r.alpha, 3) + " A x + " + fixed(r.beta, 3) + " y"},
        {"kernels", std::to_string(r.launches) + " launch" + (r.launches == 1 ? "" : "es") +
                        ", compiled in " + fixed(r.compile_ms, 0) + " ms" +
                        (r.cubin_from_cache ? " (cache)" : "")}};
    if (b.status != "ok") {
      rows.push_back({"status", b.status + ": " + b.note});
    } else {
      // Flushed: each run timed alone after an L2 flush. Warm: batches of back-to-back runs.
      rows.push_back({"time (flushed)", fixed(b.time_ms.median * 1e3, 2) + " us median (" +
                                            fixed(b.time_ms.min * 1e3, 2) + ".." +
                                            fixed(b.time_ms.max * 1e3, 2) + ", " +
                                            std::to_string(b.time_ms.count) + " runs)"});
      rows.push_back({"rate (flushed)", fixed(b.gflops, 1) + " GFLOP/s, " + fixed(b.gbs, 1) +
                                            " GB/s (" + fixed(100.0 * b.bandwidth_fraction, 1) +
                                            "% of bandwidth)"});
      const auto& w = b.warm;
      if (w.measured) {
        rows.push_back({"time (warm)", fixed(w.median_us, 2) + " us median (" + fixed(w.min_us, 2) +
                                           ".." + fixed(w.max_us, 2) + ", " +
                                           std::to_string(w.batches) + " batches of " +
                                           std::to_string(w.runs_per_batch) + " runs)"});
        rows.push_back({"rate (warm)", fixed(w.gflops, 1) + " GFLOP/s, " + fixed(w.gbs, 1) +
                                           " GB/s (" + fixed(100.0 * w.bandwidth_fraction, 1) +
                                           "% of bandwidth)"});
      }
      rows.push_back({"error", (b.error >= 0 ? sci(b.error) : std::string("nan")) +
                                   " relative L2 (tolerance " + sci(b.tolerance) + ") vs " +
                                   r.reference});
      rows.push_back({"verified", b.verified ? "yes" : "NO (" + b.note + ")"});
    }
    print_table(rows);
    if (!right) throw Error("the kernels did not give the right answer");
  });
}

}  // namespace sparsetune::cli
