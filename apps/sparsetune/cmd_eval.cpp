// `sparsetune eval DB`: how close the cost model's pick is to the fastest measured candidate,
// per matrix, from the tuning database.
#include <memory>

#include "cli.hpp"
#include "core/error.hpp"
#include "io/file_bytes.hpp"
#include "report/eval.hpp"

namespace sparsetune::cli {

void add_eval_command(CLI::App& app, const GlobalOptions& g) {
  auto* cmd = app.add_subcommand(
      "eval", "Score the predictors against the measurements of a tuning database");
  struct Options {
    std::string db, out;
    std::vector<std::string> only;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("DB", o->db, "Tuning database")->required()->check(CLI::ExistingFile);
  cmd->add_option("--only", o->only, "Only these matrices (names as the database has them)");
  cmd->add_option("-o,--out", o->out, "Also write the result as JSON to this file");
  cmd->callback([o, &g] {
    const db::TuningDb db(o->db);
    const auto e = report::evaluate_cost_model(db, o->only);
    const auto j = report::to_json(e);
    if (!o->out.empty()) io::write_file_atomic(o->out, j.dump(2) + "\n");
    if (g.json) return print_json(j);
    if (e.matrices.empty()) {
      std::printf("%s: no matrix has measured candidates that the cost model ranked\n",
                  o->db.c_str());
      return;
    }
    std::vector<std::vector<std::string>> rows = {
        {"matrix", "op", "dtype", "ranked", "pick us", "oracle us", "share of oracle"}};
    for (const auto& r : e.matrices)
      rows.push_back({r.name, r.op, r.dtype, std::to_string(r.ranked), fixed(r.pick_us, 2),
                      fixed(r.oracle_us, 2), fixed(100 * r.share, 1) + " %"});
    print_table(rows);
    std::printf(
        "\ncost model over %zu matrices: top-1 %.0f %%, geometric mean %.1f %% of the oracle "
        "(min %.1f %%), %d within 10 %%\n",
        e.matrices.size(), 100 * e.top1, 100 * e.geomean_share, 100 * e.min_share,
        e.within_10_percent);
  });
}

}  // namespace sparsetune::cli
