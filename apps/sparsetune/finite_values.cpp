// Options that take numbers refuse non-finite ones: CLI11's ranges compare, and NaN passes every
// comparison (`--budget nan` ran as no budget at all). Seeds are whole numbers in range, and the
// sign checks say what they want without printing the largest double.
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

#include "cli.hpp"

namespace sparsetune::cli {

namespace {

// `s` as a number when all of it is one (an underflow to about 0 included).
std::optional<double> number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

std::string not_finite(const std::string& s) { return "'" + s + "' is not a finite number"; }

// "" when `s` is not a number (the option's own check decides) or a finite one.
std::string non_finite(const std::string& s) {
  const auto v = number(s);
  return v && !std::isfinite(*v) ? not_finite(s) : "";
}

// "" for a seed written as a whole number from 0 to 2^63 - 1; the unsigned parse would take -1
// as 2^64 - 1 and a number past 2^64 as 2^64 - 1, silently the same seed.
std::string bad_seed(const std::string& s) {
  const bool digits =
      !s.empty() && s.size() <= 19 && s.find_first_not_of("0123456789") == std::string::npos;
  if (digits && (s.size() < 19 || s <= "9223372036854775807")) return "";
  return "'" + s + "' is not a seed (a whole number from 0 to 9223372036854775807)";
}

// "" when `s` is a number above (or, with `zero`, at least) 0.
std::string sign_check(const std::string& s, bool zero) {
  const auto v = number(s);
  if (!v) return "'" + s + "' is not a number";
  if (!std::isfinite(*v)) return not_finite(s);
  if (zero ? *v >= 0 : *v > 0) return "";
  return "'" + s + "' must be " + (zero ? "0 or more" : "a positive number");
}

// "" when `s` is a number above 0 and at most 1.
std::string share_check(const std::string& s) {
  const auto v = number(s);
  if (!v) return "'" + s + "' is not a number";
  if (*v > 0 && *v <= 1) return "";
  return "'" + s + "' must be above 0 and at most 1";
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

const CLI::Validator kPositive([](std::string& s) { return sign_check(s, false); }, "POSITIVE",
                               "positive");
const CLI::Validator kNonNegative([](std::string& s) { return sign_check(s, true); }, "NONNEGATIVE",
                                  "nonnegative");
const CLI::Validator kShare([](std::string& s) { return share_check(s); }, "(0, 1]", "share");

}  // namespace sparsetune::cli
