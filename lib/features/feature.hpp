#pragma once
// A feature is one named number about a matrix or tensor, tagged with the method (group) whose
// predictor reads it. Names are stable snake_case; docs/features.md gives every formula.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace sparsetune::features {

struct Feature {
  std::string name;
  std::string group;
  double value = 0.0;
};

// Group names, one per method.
inline constexpr std::string_view kAlphaSparse = "alphasparse";
inline constexpr std::string_view kLiteForm = "liteform";
inline constexpr std::string_view kMatXtract = "matxtract";
inline constexpr std::string_view kPermutation = "permutation";
inline constexpr std::string_view kIapSptv = "iap_sptv";

// The value of the feature called `name` (and in `group`, when one is given); throws Error when
// there is none.
double feature_value(const std::vector<Feature>& features, std::string_view name,
                     std::string_view group = {});

// The features of one group, in their order.
std::vector<Feature> select_group(const std::vector<Feature>& features, std::string_view group);

// The values alone, in order: the input vector of a predictor.
std::vector<double> feature_values(const std::vector<Feature>& features);

// "group.name": how the tuning database and the models key a feature.
std::string feature_key(const Feature& f);
// The features keyed so, as the database stores them: {"group.name": value}.
nlohmann::json feature_row(const std::vector<Feature>& features);

}  // namespace sparsetune::features
