#include "cli.hpp"

namespace sparsetune::cli {
void add_convert_command(CLI::App& app, const GlobalOptions& g) {}
}  // namespace sparsetune::cli
