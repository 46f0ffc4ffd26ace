#pragma once
// The Designer: applies an operator graph to a matrix. Operators edit the Metadata Set in order;
// the levels no operator cut are implied (threads split their warp or thread block, warps group
// 32 threads, thread blocks group the block's warps); the Format is then exactly the arrays the
// chosen fragments read.
#include <memory>
#include <string>

#include "core/matrix.hpp"
#include "graph/format.hpp"
#include "graph/graph.hpp"
#include "graph/metadata.hpp"

namespace sparsetune::graph {

struct DesignOptions {
  std::string dtype = "f64";  // f64, f32 or f16
  int index_bits = 0;         // 32 or 64; 0: 32 when every index fits
  // Padding and zero-filling operators may store at most this many times max(nnz, rows) entries
  // (plus 65536); beyond it a design is rejected (DesignError) rather than exhaust memory.
  double max_padding = 16.0;
  // The slice of each row when the matrix is a tensor's view (SpTV); SLICE_DIV needs it.
  std::shared_ptr<const RowSlices> slices;
};

// Runs the operators of a validated graph; every part is finished (all three levels present).
MetadataSet apply_graph(const Graph& g, const Csr64& a, double max_padding = 16.0,
                        std::shared_ptr<const RowSlices> slices = nullptr);

// Graph -> Metadata Set -> Format, with every data rule checked (DesignError names the operator
// and the rule). The graph is validated first (GraphError).
Format design(Graph g, const Csr64& a, const DesignOptions& opt = {});

}  // namespace sparsetune::graph
