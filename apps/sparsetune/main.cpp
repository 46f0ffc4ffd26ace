// sparsetune: one tool, one subcommand per job.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <filesystem>

#include "cli.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "core/version.hpp"

int main(int argc, char** argv) {
  using namespace sparsetune;
  reuse_freed_memory();
  spdlog::set_default_logger(spdlog::stderr_color_mt("sparsetune"));
  spdlog::set_pattern("%^%l%$: %v");

  CLI::App app{"sparsetune: finds the fastest GPU format and kernel for a sparse matrix or tensor"};
  app.set_version_flag("--version", std::string("sparsetune ") + kVersion);
  app.require_subcommand(1);
  app.fallthrough();

  cli::GlobalOptions g;
  int verbose = 0;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbose, "More log output (-vv for trace)");
  app.add_flag("-q,--quiet", quiet, "Only errors on stderr");
  app.add_flag("--json", g.json, "Machine-readable JSON on stdout");
  app.parse_complete_callback([&] {
    spdlog::set_level(quiet          ? spdlog::level::err
                      : verbose >= 2 ? spdlog::level::trace
                      : verbose == 1 ? spdlog::level::debug
                                     : spdlog::level::info);
  });

  cli::add_info_command(app, g);
  cli::add_convert_command(app, g);
  cli::add_features_command(app, g);
  cli::add_gen_command(app, g);
  cli::add_db_command(app, g);
  cli::add_bench_command(app, g);
  cli::add_emit_command(app, g);
  cli::add_tune_command(app, g);
  cli::add_run_command(app, g);
  cli::add_report_command(app, g);
  cli::add_eval_command(app, g);
  cli::add_slice_gcn_command(app, g);
  cli::add_train_command(app, g);
  cli::add_collect_command(app, g);
  cli::add_row_orders_command(app, g);
  cli::refuse_non_finite_values(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const Error& e) {
    spdlog::error("{}", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    spdlog::error("out of memory");
    return 1;
  } catch (const std::filesystem::filesystem_error& e) {
    // A path that cannot be made or written (a file where a folder goes, no permission): the
    // message names the path; it is the user's to fix, not an internal fault.
    spdlog::error("{}", e.what());
    return 1;
  } catch (const std::exception& e) {
    spdlog::error("internal error: {}", e.what());
    return 3;
  }
  return 0;
}
