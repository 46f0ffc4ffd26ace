#include "graph/slice_assignment.hpp"

#include "graph/operator.hpp"

namespace sparsetune::graph {

namespace {
const nlohmann::json kNone = nlohmann::json::array();
const nlohmann::json& list(const nlohmann::json& params, const char* name) {
  return params.contains(name) ? params.at(name) : kNone;
}
}  // namespace

void set_slice_assignment(nlohmann::json& params, const std::vector<std::int64_t>& part_of_slice) {
  std::vector<std::int64_t> runs;
  for (std::size_t s = 0; s < part_of_slice.size(); ++s) {
    if (s > 0 && part_of_slice[s] == part_of_slice[s - 1]) {
      ++runs.back();
      continue;
    }
    runs.push_back(part_of_slice[s]);
    runs.push_back(1);
  }
  params.erase("assign");
  params.erase("assign_runs");
  if (runs.size() < part_of_slice.size())
    params["assign_runs"] = runs;
  else
    params["assign"] = part_of_slice;
}

std::string slice_assignment_rule(const nlohmann::json& params, std::int64_t count) {
  const auto& flat = list(params, "assign");
  const auto& runs = list(params, "assign_runs");
  if (!flat.empty() && !runs.empty()) return "give assign or assign_runs, not both";
  for (const auto& a : flat)
    if (a.get<std::int64_t>() >= count)
      return "assign names part " + a.dump() + " of " + std::to_string(count);
  if (runs.size() % 2 != 0) return "assign_runs holds pairs (part, slices), got an odd length";
  for (std::size_t i = 0; i < runs.size(); i += 2) {
    if (runs[i].get<std::int64_t>() >= count)
      return "assign_runs names part " + runs[i].dump() + " of " + std::to_string(count);
    if (runs[i + 1].get<std::int64_t>() < 1)
      return "assign_runs: run " + std::to_string(i / 2) + " holds no slice";
  }
  return "";
}

std::vector<std::int64_t> slice_assignment(const nlohmann::json& params, std::int64_t slices) {
  const auto& flat = list(params, "assign");
  const auto& runs = list(params, "assign_runs");
  double total = static_cast<double>(flat.size());
  for (std::size_t i = 1; i < runs.size(); i += 2) {
    if (runs[i].get<double>() < 1) throw DesignError("SLICE_DIV: rule: a run holds no slice");
    total += runs[i].get<double>();
  }
  const double limit = slices >= 0 ? static_cast<double>(slices) : 1099511627776.0;
  if ((slices >= 0 && total != limit) || total > limit)
    throw DesignError("SLICE_DIV: rule: the assignment covers " +
                      std::to_string(static_cast<long long>(total)) + " slices" +
                      (slices >= 0 ? ", the tensor has " + std::to_string(slices) : std::string()));
  std::vector<std::int64_t> part;
  part.reserve(static_cast<std::size_t>(total));
  for (const auto& a : flat) part.push_back(a.get<std::int64_t>());
  for (std::size_t i = 0; i + 1 < runs.size(); i += 2)
    part.insert(part.end(), runs[i + 1].get<std::size_t>(), runs[i].get<std::int64_t>());
  return part;
}

}  // namespace sparsetune::graph
