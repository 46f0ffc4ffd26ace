#include "features/feature.hpp"

#include "core/error.hpp"

namespace sparsetune::features {

double feature_value(const std::vector<Feature>& features, std::string_view name,
                     std::string_view group) {
  for (const auto& f : features)
    if (f.name == name && (group.empty() || f.group == group)) return f.value;
  throw Error("no feature '" + std::string(name) + "'" +
              (group.empty() ? std::string() : " in group '" + std::string(group) + "'"));
}

std::vector<Feature> select_group(const std::vector<Feature>& features, std::string_view group) {
  std::vector<Feature> out;
  for (const auto& f : features)
    if (f.group == group) out.push_back(f);
  return out;
}

std::vector<double> feature_values(const std::vector<Feature>& features) {
  std::vector<double> v;
  v.reserve(features.size());
  for (const auto& f : features) v.push_back(f.value);
  return v;
}

std::string feature_key(const Feature& f) { return f.group + "." + f.name; }

nlohmann::json feature_row(const std::vector<Feature>& features) {
  nlohmann::json row = nlohmann::json::object();
  for (const auto& f : features) row[feature_key(f)] = f.value;
  return row;
}

}  // namespace sparsetune::features
