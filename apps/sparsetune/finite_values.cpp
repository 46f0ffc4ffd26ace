// Options that take numbers refuse non-finite ones: CLI11's ranges compare, and NaN passes every
// comparison (`--budget nan` ran as no budget at all).
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "cli.hpp"

namespace sparsetune::cli {

namespace {

// "" when `s` is not a number written whole, or is a finite one; else why it is refused.
std::string non_finite(const std::string& s) {
  if (s.empty()) return "";
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return "";  // not a number: the option's own check decides
  if (std::isfinite(v) && errno != ERANGE) return "";
  return "'" + s + "' is not a finite number";
}

void refuse_in(CLI::App& app) {
  const CLI::Validator finite(non_finite, "", "finite");
  for (CLI::Option* o : app.get_options())
    if (!o->get_positional() && o->get_type_size_max() > 0) o->check(finite);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) refuse_in(*sub);
}

}  // namespace

void refuse_non_finite_values(CLI::App& app) { refuse_in(app); }

}  // namespace sparsetune::cli
