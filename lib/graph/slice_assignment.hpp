#pragma once
// SLICE_DIV's part of each slice, in one of two forms: `assign`, one entry per index of the slice
// mode, or `assign_runs`, pairs of (part, slices) in slice order. The pairs are written where
// they are shorter: a slice mode of 10^7 indices, nearly all of them empty slices, took 20 MB of
// the format's header and 110 MB of graph.json as one entry each.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sparsetune::graph {

// Sets `params`' assignment from the part of each slice, in the shorter form (the other removed).
void set_slice_assignment(nlohmann::json& params, const std::vector<std::int64_t>& part_of_slice);

// "" when the assignment is well formed for `count` parts: one form only, every part below
// `count`, every run of at least one slice; otherwise why not.
std::string slice_assignment_rule(const nlohmann::json& params, std::int64_t count);

// The part of each slice. Throws DesignError when the slices counted are not `slices` (-1: any
// count up to 2^40), before anything that size is allocated.
std::vector<std::int64_t> slice_assignment(const nlohmann::json& params, std::int64_t slices = -1);

}  // namespace sparsetune::graph
