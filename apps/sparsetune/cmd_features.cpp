#include "cli.hpp"

namespace sparsetune::cli {
void add_features_command(CLI::App& app, const GlobalOptions& g) {}
}  // namespace sparsetune::cli
