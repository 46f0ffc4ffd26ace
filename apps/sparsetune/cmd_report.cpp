// `sparsetune report DB -o DIR`: a tuning database as CSV, plots and an index.html.
#include <memory>

#include "cli.hpp"
#include "core/error.hpp"
#include "report/report.hpp"

namespace sparsetune::cli {

void add_report_command(CLI::App& app, const GlobalOptions& g) {
  auto* cmd = app.add_subcommand(
      "report", "Summarise a tuning database per matrix: CSV, PNG plots and an index.html");
  auto o = std::make_shared<report::ReportOptions>();
  auto no_plots = std::make_shared<bool>(false);
  cmd->add_option("DB", o->database, "Tuning database (sparsetune tune --db, scripts/batch.sh)")
      ->required();
  cmd->add_option("-o,--out", o->out_dir, "Output folder (replaced as a whole)")->required();
  cmd->add_flag("--no-plots", *no_plots, "CSV files and summary.json only (no Python needed)");
  cmd->add_option("--python", o->python,
                  "Python with matplotlib (default: $SPARSETUNE_PYTHON, else /usr/bin/python3)");
  cmd->callback([o, no_plots, &g] {
    o->plots = !*no_plots;
    const auto r = report::write_report(*o);
    const auto& s = r.data.summary;
    if (g.json) return print_json({{"summary", s}, {"files", r.files}});
    std::vector<std::vector<std::string>> rows = {
        {"database", o->database},
        {"matrices", std::to_string(r.data.matrices.size())},
        {"geomean speedup vs best cuSPARSE",
         s["geomean_speedup"].is_null()
             ? std::string("(no cuSPARSE measurements)")
             : fixed(s["geomean_speedup"].get<double>(), 2) + "x over " +
                   std::to_string(s["with_cusparse"].get<int>()) + " matrices"}};
    for (const auto& f : r.files) rows.push_back({"wrote", f});
    print_table(rows);
  });
}

}  // namespace sparsetune::cli
