#pragma once
// emit-kernel: graph + matrix -> DIR/format.safetensors, DIR/kernel.cu, DIR/kernel.h (host side:
// load the binary, run the kernels) and DIR/graph.json. Needs no GPU.
#include <string>
#include <vector>

#include "codegen/kernel_builder.hpp"
#include "codegen/optimizer.hpp"
#include "core/matrix.hpp"
#include "graph/designer.hpp"
#include "graph/graph.hpp"
#include "io/staged_folder.hpp"

namespace sparsetune::codegen {

struct EmitOptions {
  graph::DesignOptions design;
  OptimizerOptions optimizer;
  graph::SptvSlices sptv;  // op "sptv": HTF's slice table, recorded in the format binary
  // op "spmm": B's and C's layout, "row" (row strides ldb, ldc) or "col" (column strides); the
  // kernels are compiled for it and the format binary records it (graph::Format::layout).
  // Throws Error for another name or "col" with another op.
  std::string layout = "row";
};

struct Emitted {
  graph::Format format;
  KernelSource kernels;
  std::string host_header;
  std::string format_bytes;  // the safetensors file
  OptimizerReport report;
};

// Designs, optimizes and generates everything in memory.
Emitted generate(const graph::Graph& g, const Csr64& a, const EmitOptions& opt = {});

// The host header for a format whose safetensors bytes are `format_bytes`.
std::string build_host_header(const graph::Format& f, const std::string& format_bytes);

// The start of a host run function of an adding format (one whose parts add into y): y = beta y,
// zeroed without reading it when beta = 0 (a memset), else scaled by kScaleKernel over `rows`.
// It declares `cudaError_t e`; run() and the pipelined run share it.
std::string y_prologue(std::int64_t rows);

// Stages x.f64 (a deterministic test vector) and y_reference.f64 (A·x by the fp64 CPU
// reference), raw little-endian doubles, for checking a kernel where it runs.
void stage_reference(const Csr64& a, io::StagedFolder& out);
// The same written into `dir` (each file atomically). Returns the paths.
std::vector<std::string> write_reference(const Csr64& a, const std::string& dir);

// Stages the four files: format.safetensors, kernel.cu, kernel.h, graph.json.
void stage_emitted(const Emitted& e, const graph::Graph& g, io::StagedFolder& out);
// Writes them as a whole (io::StagedFolder): `dir` ends up holding all four new files or, after a
// failure or a kill, its previous contents. Returns the paths written.
std::vector<std::string> write_emitted(const Emitted& e, const graph::Graph& g,
                                       const std::string& dir);

}  // namespace sparsetune::codegen
