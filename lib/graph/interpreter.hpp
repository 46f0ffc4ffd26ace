#pragma once
// The CPU interpreter: walks a Format the way its kernels do (same BMTB, warp and thread loops,
// same arrays through the same formulas, the same reduction structure, lane by lane), so every
// graph can be checked against the fp64 reference without a GPU.
#include <cstdint>
#include <vector>

#include "graph/format.hpp"

namespace sparsetune::graph {

// y = A·x computed by walking every part. Throws Error when the format is inconsistent (an index
// out of range), never reads outside an array.
std::vector<double> interpret(const Format& f, const std::vector<double>& x);

// How many times part `part` writes each row of y (the length is the matrix's rows).
std::vector<std::int64_t> count_writes(const Format& f, std::size_t part);

}  // namespace sparsetune::graph
