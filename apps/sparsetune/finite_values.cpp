// Options that take numbers refuse non-finite ones: CLI11's ranges compare, and NaN passes every
// comparison (`--budget nan` ran as no budget at all). Seeds are whole numbers in range.
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
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return "";  // not a number: the option's own check decides
  // ERANGE also marks an underflow to (nearly) zero, which is a finite number.
  if (std::isfinite(v)) return "";
  return "'" + s + "' is not a finite number";
}

// "" for a seed written as a whole number from 0 to 2^63 - 1; the unsigned parse would take -1
// as 2^64 - 1 and a number past 2^64 as 2^64 - 1, silently the same seed.
std::string bad_seed(const std::string& s) {
  const bool digits =
      !s.empty() && s.size() <= 19 && s.find_first_not_of("0123456789") == std::string::npos;
  if (digits && (s.size() < 19 || s <= "9223372036854775807")) return "";
  return "'" + s + "' is not a seed (a whole number from 0 to 9223372036854775807)";
}

void refuse_in(CLI::App& app) {
  const CLI::Validator finite(non_finite, "", "finite");
  const CLI::Validator seed(bad_seed, "", "seed");
  for (CLI::Option* o : app.get_options()) {
    if (o->get_positional() || o->get_type_size_max() == 0) continue;
    o->check(finite);
    if (o->check_lname("seed")) o->check(seed);
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) refuse_in(*sub);
}

}  // namespace

void refuse_non_finite_values(CLI::App& app) { refuse_in(app); }

namespace {
// "" when `s` is a number above (or, with `zero`, at least) 0.
std::string sign_check(const std::string& s, bool zero) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || end != s.c_str() + s.size()) return "'" + s + "' is not a number";
  if (!std::isfinite(v)) return "'" + s + "' is not a finite number";
  if (zero ? v >= 0 : v > 0) return "";
  return "'" + s + "' must be " + (zero ? "0 or more" : "a positive number");
}
}  // namespace

const CLI::Validator kPositive([](std::string& s) { return sign_check(s, false); }, "POSITIVE",
                               "positive");
const CLI::Validator kNonNegative([](std::string& s) { return sign_check(s, true); }, "NONNEGATIVE",
                                  "nonnegative");

}  // namespace sparsetune::cli
