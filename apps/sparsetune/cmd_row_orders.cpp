// `sparsetune row-orders FILE`: the row permutations of output-stationary SpMM side by side
// (their cost, the busiest warp, the B lines per CTA step), and one of them written out.
#include <cstdio>
#include <string>

#include "cli.hpp"
#include "core/permute.hpp"
#include "core/row_orders.hpp"
#include "io/matrix_file.hpp"

namespace sparsetune::cli {

void add_row_orders_command(CLI::App& app, const GlobalOptions& g) {
  struct Args {
    std::string file, order, out;
    row_orders::Options o;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "row-orders", "Row permutations for SpMM: each one's cost, busiest warp and B lines read");
  cmd->add_option("FILE", args->file, "Matrix: .mtx, .mtx.gz or .safetensors")->required();
  cmd->add_option("--warps", args->o.warps, "Warps per CTA (rows striped over them)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--threads", args->o.threads, "Threads sharing a row")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--line", args->o.line, "Columns per cache line of B")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--window", args->o.window, "Candidates of each Hamming search")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--order", args->order, "Write the matrix in this order (with -o)");
  cmd->add_option("-o,--out", args->out, "Output matrix file (with --order)");
  cmd->callback([&g, args] {
    if (args->order.empty() != args->out.empty())
      throw Error("row-orders: --order and -o go together");
    const Csr64 a = io::read_matrix(args->file);
    if (!args->order.empty()) {
      const auto p = row_orders::row_order(a, row_orders::parse(args->order), args->o);
      io::write_matrix(args->out, permute_rows(a, p));
    }
    const auto rep = row_orders::compare_orders(a, args->o);
    if (g.json) {
      nlohmann::json j = {{"matrix", args->file},
                          {"rows", a.rows},
                          {"nnz", a.nnz()},
                          {"warps", args->o.warps},
                          {"threads", args->o.threads},
                          {"line", args->o.line},
                          {"window", args->o.window},
                          {"orders", nlohmann::json::array()}};
      for (const auto& r : rep)
        j["orders"].push_back({{"order", row_orders::name(r.order)},
                               {"ms", r.seconds * 1e3},
                               {"max_warp_load", r.max_warp_load},
                               {"lines_per_step", r.lines_per_step}});
      return print_json(j);
    }
    std::printf("%-11s %10s %14s %15s\n", "order", "ms", "max warp load", "lines per step");
    for (const auto& r : rep)
      std::printf("%-11s %10.2f %14lld %15lld\n", row_orders::name(r.order).c_str(),
                  r.seconds * 1e3, static_cast<long long>(r.max_warp_load),
                  static_cast<long long>(r.lines_per_step));
  });
}

}  // namespace sparsetune::cli
