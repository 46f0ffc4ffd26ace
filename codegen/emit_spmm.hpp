#pragma once
// kernel.h's SpMM side: the kernels' declarations and run(f, B, ldb, C, ldc, n, alpha, beta).
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "graph/format.hpp"

namespace sparsetune::codegen {

// extern "C" declarations of the parts' kernels, or of the one fused kernel taking every part's
// arrays (p<i>_<name>): `head(kernel)` opens a declaration with the operation's arguments.
std::string part_declarations(const graph::Format& f,
                              const std::function<std::string(const std::string&)>& head,
                              const std::string& val);

// extern "C" declarations of the parts' kernels and the C scaling kernel (before the namespace).
std::string spmm_declarations(const graph::Format& f, const std::string& val,
                              const std::string& acc);

// The launch arguments of part p's stored arrays in kernel.h, ",\n static_cast<const T*>(
// f.arrays[k])" each: `indices` are their places in kRanges (SpMV's run() uses it too).
std::string part_array_args(const graph::PartFormat& p, const std::vector<std::size_t>& indices,
                            const std::string& val);

// The run() functions inside namespace sparsetune_kernel. `part_arrays[i]` are the indices (into
// kRanges) of part i's stored arrays, in the order its kernel takes them.
std::string spmm_run_section(const graph::Format& f,
                             const std::vector<std::vector<std::size_t>>& part_arrays,
                             const std::string& val);

}  // namespace sparsetune::codegen
