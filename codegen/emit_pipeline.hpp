#pragma once
// kernel.h's pipelined run from host memory (IAP-SpTV Alg. 1), emitted for SpTV formats.
#include <cstddef>
#include <string>
#include <vector>

#include "graph/format.hpp"

namespace sparsetune::codegen {

// The HostFormat type, load_host(), release() and run_pipelined() of kernel.h, inside namespace
// sparsetune_kernel. `part_arrays[i]` are the indices (into kRanges) of part i's stored arrays,
// in the order its kernel takes them; `val` is the C type of x.
std::string pipelined_run_section(const graph::Format& f,
                                  const std::vector<std::vector<std::size_t>>& part_arrays,
                                  const std::string& val);

}  // namespace sparsetune::codegen
