#pragma once
// The Kernel Builder: for each part of a Format, splices the kernel skeleton (loops over BMTB,
// BMW and BMT), the fragment of each reduction operator, and the adapters between reduction
// levels into one kernel; array reads become loads or the Optimizer's formulas.
#include <string>
#include <vector>

#include "codegen/fusion.hpp"
#include "graph/format.hpp"

namespace sparsetune::codegen {

// Adding formats (not store-only) scale y by beta with this kernel before the parts run:
// (y, n, beta), 256 threads a block.
inline constexpr const char* kScaleKernel = "sparsetune_spmv_scale_y";
inline constexpr int kScaleThreads = 256;
// SpMM's: (C, rows, n, ldc, beta), C in the format's layout (row- or column-major, stride ldc);
// also zeroes C when beta = 0 (C may be strided).
inline constexpr const char* kScaleKernelSpmm = "sparsetune_spmm_scale_c";

struct KernelSource {
  std::string source;                // one self-contained .cu (nvcc and NVRTC)
  std::vector<std::string> kernels;  // extern "C" names, one per part with work (or the fused one)
  std::string scale_kernel;          // kScaleKernel (SpMM: kScaleKernelSpmm) for adding formats
  // The kernels' index arithmetic: 32 (index_fits_int32) or 64; 0 for a source read from a file.
  int index_bits = 0;
};

// `graph_line` describes the graph in the header comment.
KernelSource build_kernels(const graph::Format& f, const std::string& graph_name,
                           const std::string& graph_line);

// Whether every index the kernels of `f` form fits in 31 bits with room to spare (below 2^30),
// and the design did not choose 64-bit indices (Format::index_bits):
// rows, columns, entries, launch sizes, every array's length and values, and every term of every
// model's formula. Their index arithmetic is then 32-bit (st_idx_t is `int`), one instruction
// where 64-bit takes two or more; B and C offsets (row times ldb or ldc) stay 64-bit either way.
bool index_fits_int32(const graph::Format& f);

// The C type a stored array has in the kernel ("int", "short", "double", ...).
std::string c_type(const std::string& dtype, const std::string& value_dtype);

}  // namespace sparsetune::codegen
