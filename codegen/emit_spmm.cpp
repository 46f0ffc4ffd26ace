#include "codegen/emit_spmm.hpp"

#include <algorithm>

#include "codegen/kernel_builder.hpp"

namespace sparsetune::codegen {

std::string part_declarations(const graph::Format& f,
                              const std::function<std::string(const std::string&)>& head,
                              const std::string& val) {
  std::string h;
  const bool fused = plan_fusion(f).fused;
  if (fused) h += head(kFusedKernel);  // then every part's arrays
  for (std::size_t i = 0; i < f.parts.size(); ++i) {
    const auto& p = f.parts[i];
    if (p.n_bmtb == 0) continue;
    if (!fused) h += head(p.kernel);
    const std::string prefix = fused ? "p" + std::to_string(i) + "_" : "p_";
    for (const auto& [name, a] : p.arrays)
      if (a.stored())
        h += ", const " + (a.dtype[0] == 'F' ? val : c_type(a.dtype, a.dtype)) + "* __restrict__ " +
             prefix + name;
    if (!fused) h += ");\n";
  }
  if (fused) h += ");\n";
  return h;
}

std::string spmm_declarations(const graph::Format& f, const std::string& val,
                              const std::string& acc) {
  std::string h = part_declarations(
      f,
      [&](const std::string& kernel) {
        return "extern \"C\" __global__ void " + kernel + "(const " + val +
               "* __restrict__ B, const long long ldb, " + acc +
               "* __restrict__ C, const long long ldc, const long long n, const " + acc +
               " alpha, const " + acc + " beta";
      },
      val);
  if (!f.store_only)
    h += "extern \"C\" __global__ void " + std::string(kScaleKernelSpmm) + "(" + acc +
         "* __restrict__ C, const long long rows, const long long n, const long long ldc, const " +
         acc + " beta);\n";
  return h;
}

std::string part_array_args(const graph::PartFormat& p, const std::vector<std::size_t>& indices,
                            const std::string& val) {
  std::string h;
  std::size_t k = 0;
  for (const auto& [name, a] : p.arrays) {
    if (!a.stored()) continue;
    const std::string t = a.dtype[0] == 'F' ? val : c_type(a.dtype, a.dtype);
    h +=
        ",\n      static_cast<const " + t + "*>(f.arrays[" + std::to_string(indices.at(k++)) + "])";
  }
  return h;
}

std::string spmm_run_section(const graph::Format& f,
                             const std::vector<std::vector<std::size_t>>& part_arrays,
                             const std::string& val) {
  const Fusion u = plan_fusion(f);
  // The largest grid y (at most 65535) comes from the narrowest tile.
  const std::string narrowest = std::to_string(u.narrowest_tile);
  std::string h;
  const bool col = f.col_major();
  h +=
      std::string(
          col ? "// C = alpha A B + beta C (cuSPARSE's convention) for a dense column-major B of "
                "n\n"
                "// columns (kCols rows, column stride ldb >= kCols: B(i, j) = B[i + j * ldb]) and "
                "C\n"
                "// (kRows rows, column stride ldc >= kRows), device pointers, on `stream`; these\n"
                "// kernels were generated for column-major B and C (kColMajor) only.\n// "
              : "// C = alpha A B + beta C (cuSPARSE's convention) for a dense row-major B of n "
                "columns\n"
                "// (kCols rows, row stride ldb) and C (kRows rows, row stride ldc), device "
                "pointers, on\n"
                "// `stream`. ") +
      std::string(f.store_only
                      ? "Store-only: every row of C is written exactly once per column tile, "
                        "reading C only\n// when beta != 0, so a C holding NaN is fine with "
                        "beta = 0.\n"
                      : "C is first set to beta C (zeros when beta = 0, never reading it), then "
                        "the part kernels\n// add alpha times their results.\n") +
      (u.fused ? "// All parts run in one launch (horizontal fusion).\n" : "") +
      (col ? "// n from 1 up; B is read one value at a time (its rows are strided).\n"
           : "// n from 1 up; B is read with vector loads where ldb and B are aligned to them.\n");
  h += "inline cudaError_t run(const Format& f, const value_t* B, long long ldb, result_t* C,\n"
       "                       long long ldc, long long n, result_t alpha, result_t beta,\n"
       "                       cudaStream_t stream = 0) {\n";
  h +=
      std::string(
          col ? "  if (n < 1 || ldb < (kCols > 0 ? kCols : 1) || ldc < (kRows > 0 ? kRows : 1) ||\n"
                "      (n + " +
                    narrowest + " - 1) / " + narrowest + " > 65535)\n"
              : "  if (n < 1 || ldb < n || ldc < n || (n + " + narrowest + " - 1) / " + narrowest +
                    " > 65535)\n") +
      "    return cudaErrorInvalidValue;\n";
  if (!f.store_only) {
    h += "  if (kRows > 0)\n    " + std::string(kScaleKernelSpmm) +
         "<<<(unsigned)((kRows * n + 255) / 256 < 65536 ? (kRows * n + 255) / 256 : 65536), " +
         std::to_string(kScaleThreads) + ", 0, stream>>>(C, kRows, n, ldc, beta);\n";
  }
  const auto launch = [&](const std::string& kernel, std::int64_t grid, const std::string& tile,
                          int threads) {
    h += "  " + kernel + "<<<dim3(" + std::to_string(grid) + ", (unsigned)((n + " + tile +
         " - 1) / " + tile + ")), " + std::to_string(threads) +
         ", 0, stream>>>(B, ldb, C, ldc, n, alpha, beta";
  };
  for (std::size_t i = 0; i < f.parts.size(); ++i) {
    const auto& p = f.parts[i];
    if (p.n_bmtb == 0) continue;
    // Fused: one launch over the parts' grids summed, each part's arrays in turn.
    if (!u.fused)
      launch(p.kernel, p.grid, std::to_string(p.col_span()), p.threads);
    else if (h.find(kFusedKernel) == std::string::npos)
      launch(kFusedKernel, u.grid, narrowest, p.threads);
    h += part_array_args(p, part_arrays[i], val);
    if (!u.fused) h += ");\n";
  }
  if (u.fused) h += ");\n";
  h += "  (void)f;\n  return cudaGetLastError();\n}\n\n";
  if (col)
    h += "// C = A B with B and C packed column-major (ldb = kCols, ldc = kRows, at least 1).\n"
         "inline cudaError_t run(const Format& f, const value_t* B, result_t* C, long long n,\n"
         "                       cudaStream_t stream = 0) {\n"
         "  return run(f, B, kCols > 0 ? kCols : 1, C, kRows > 0 ? kRows : 1, n, result_t(1),\n"
         "             result_t(0), stream);\n}\n\n";
  else
    h += "// C = A B with B and C packed (ldb = ldc = n).\n"
         "inline cudaError_t run(const Format& f, const value_t* B, result_t* C, long long n,\n"
         "                       cudaStream_t stream = 0) {\n"
         "  return run(f, B, n, C, n, n, result_t(1), result_t(0), stream);\n}\n\n";
  return h;
}

}  // namespace sparsetune::codegen
