#pragma once
// Every operator, by name. Adding one is a line in registry.cpp.
#include <string>
#include <vector>

#include "graph/operator.hpp"

namespace sparsetune::graph {

// All operators in registration order.
const std::vector<const Operator*>& operators();
// The operator of that name, or nullptr.
const Operator* find_operator(const std::string& name);
// Reduction operator of that name, or nullptr.
const ReductionOperator* find_reduction(const std::string& name);

}  // namespace sparsetune::graph
