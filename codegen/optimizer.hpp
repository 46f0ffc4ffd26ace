#pragma once
// The Optimizer: model-driven format compression (an index array that a constant, linear, step
// or periodic-linear formula reproduces, up to a few exceptions, is computed instead of loaded),
// narrow storage for the arrays that stay (the smallest integer type that holds them), a
// segmented COO's row steps packed into its column words, and removal of loops that run at most
// once.
#include <cstdint>
#include <vector>

#include "graph/format.hpp"

namespace sparsetune::codegen {

struct OptimizerOptions {
  bool compress = true;    // replace arrays by formulas
  int max_exceptions = 8;  // values a formula may miss (each becomes a `case` in the kernel)
  bool narrow = true;      // 8/16/32-bit storage when the values fit
  bool pack = true;        // nz_row_delta in nz_col's spare high bits (graph::pack_row_delta)
  // 32-bit nz_col words that fit 24 bits stored as 16 + 8 (graph::split_col_words): one byte
  // less an entry, one more load. Off by default: the SpTV pipeline, bound by the bytes it
  // sends, turns it on (docs/benchmarks.md).
  bool split_words = false;
  bool drop_loops = true;  // loops that run once become `if`
  // Threads whose arrays follow the strided pattern over their warp block or thread block (the
  // threads no operator cut) get their first entry, stride, size and row computed in the kernel
  // from one prefix array per parent.
  bool derive_threads = true;

  // Every array stored, full width (`emit-kernel --no-optimize`).
  static OptimizerOptions none() {
    OptimizerOptions o;
    o.compress = o.narrow = o.pack = o.split_words = o.drop_loops = false;
    o.max_exceptions = 0;
    return o;
  }
};

struct OptimizerReport {
  int modeled = 0;   // arrays replaced by formulas
  int derived = 0;   // thread arrays computed from their parent's entry range
  int narrowed = 0;  // arrays stored narrower than the index width
  int packed = 0;    // row-step arrays packed into their column words
  int split = 0;     // column words stored as 24 bits (16 + 8)
  std::int64_t bytes_before = 0, bytes_after = 0;
};

// The simplest formula (fewest exceptions, then constant < linear < step < periodic < table) that
// reproduces `v` with at most `max_exceptions` misses; kind Stored when none does.
graph::ArrayModel fit_model(const std::vector<std::int64_t>& v, int max_exceptions);
// The same, also trying a table model (graph/format.hpp) for each of `periods`; a table
// model is preferred only when no simpler kind fits as well.
graph::ArrayModel fit_model(const std::vector<std::int64_t>& v, int max_exceptions,
                            const std::vector<std::int64_t>& periods);

// Derives the part's thread arrays from their parents (`mode` 1: warp blocks, 2: thread
// blocks) when every value the kernel would compute equals the stored one; returns the number
// of arrays derived (0: the part is left as it was).
int derive_strided_threads(graph::PartFormat& p, int mode, int index_bits);

OptimizerReport optimize(graph::Format& f, const OptimizerOptions& opt = {});

}  // namespace sparsetune::codegen
