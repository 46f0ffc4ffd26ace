#pragma once
// Shared pieces of the command line: global options and the registration hook of each command.
// Commands parse arguments, call into lib/, and print; they hold no logic of their own.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sparsetune::search {
struct SptvTuneOptions;
}
namespace sparsetune::row_orders {
enum class Candidates;
}

namespace sparsetune::cli {

struct GlobalOptions {
  bool json = false;  // machine-readable output on stdout
};

void add_info_command(CLI::App& app, const GlobalOptions& g);
void add_convert_command(CLI::App& app, const GlobalOptions& g);
void add_features_command(CLI::App& app, const GlobalOptions& g);
void add_gen_command(CLI::App& app, const GlobalOptions& g);
void add_db_command(CLI::App& app, const GlobalOptions& g);
void add_bench_command(CLI::App& app, const GlobalOptions& g);
void add_emit_command(CLI::App& app, const GlobalOptions& g);
void add_tune_command(CLI::App& app, const GlobalOptions& g);
void add_run_command(CLI::App& app, const GlobalOptions& g);
void add_report_command(CLI::App& app, const GlobalOptions& g);
void add_eval_command(CLI::App& app, const GlobalOptions& g);
void add_slice_gcn_command(CLI::App& app, const GlobalOptions& g);
// tune --op sptv (cmd_tune_sptv.cpp).
void run_tune_sptv(const search::SptvTuneOptions& o, const GlobalOptions& g);
void add_train_command(CLI::App& app, const GlobalOptions& g);
void add_collect_command(CLI::App& app, const GlobalOptions& g);
void add_row_orders_command(CLI::App& app, const GlobalOptions& g);

// `flag` (--candidates, or another name) matrix|shared-lines into `into`, default shared-lines;
// `serves` is put before the help text (e.g. "row-order: ").
CLI::Option* add_candidates_option(CLI::App& cmd, row_orders::Candidates& into,
                                   const std::string& flag = "--candidates",
                                   const std::string& serves = "");

// Prints rows as an aligned two-or-more-column text table.
// Every option of `app` and its subcommands that takes a value refuses "nan", "inf" and other
// non-finite numbers (CLI11's ranges let NaN through, and no option means either); positional
// arguments, which are file names, are left alone. Every --seed takes a whole number from 0 to
// 2^63 - 1 (not -1 read as 2^64 - 1).
void refuse_non_finite_values(CLI::App& app);

// CLI11's PositiveNumber and NonNegativeNumber, with a message that does not print the largest
// double in full ("must be a positive number").
extern const CLI::Validator kPositive;
extern const CLI::Validator kNonNegative;
// A number above 0 and at most 1 (a share, a density threshold).
extern const CLI::Validator kShare;

void print_table(const std::vector<std::vector<std::string>>& rows);
void print_json(const nlohmann::json& j);

// Numbers for tables: fixed-point with `digits` decimals, or scientific with `digits` decimals.
std::string fixed(double v, int digits);
std::string sci(double v, int digits = 2);

}  // namespace sparsetune::cli
