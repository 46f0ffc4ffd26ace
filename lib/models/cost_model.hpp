#pragma once
// The analytic cost model: an SpMV time estimate for a designed operator graph without running
// anything. Each part's kernel is modeled from its Metadata Set, exactly as the skeleton maps it:
// a warp runs its warp block's thread blocks 32 lanes at a time, so one round costs the longest
// thread's entries; a CUDA block's warps share its warp blocks. The estimate of a part is
//   launch + max(memory, issue, tail) + atomics
// where memory = bytes moved / bandwidth (scaled down when too few warps are in flight to keep the
// memory system busy), issue = warp steps over the SMs' step rate (lanes idle in a round still
// cost their step: the load imbalance), tail = the longest single warp's steps at the latency of
// one dependent step, and atomics = results sent to global memory by atomic adds over the atomic
// rate. docs/tuning.md lists the constants and why they have their values.
#include <cstdint>
#include <string>

#include "graph/metadata.hpp"

namespace sparsetune::models {

// What the model knows of a GPU. The defaults are an H100 SXM's.
struct DeviceSpec {
  std::string name = "cost model (H100 SXM class)";
  int sms = 132;
  double bandwidth_gbs = 3000.0;     // sustained DRAM bandwidth
  std::int64_t l2_bytes = 50 << 20;  // x stays in L2 when it fits
  double launch_us = 3.0;            // one kernel launch, back to back
  double warp_step_ns = 1.5;         // per SM: one warp step (a load + FMA per lane) issued
  double serial_step_ns = 8.0;       // one warp's dependent steps, back to back
  double atomics_per_ns = 64.0;      // global atomic adds retired, whole GPU
  int saturating_warps_per_sm = 16;  // warps in flight that keep DRAM busy
};

struct CostEstimate {
  double time_us = 0;
  double bytes = 0;  // bytes the model counts as moved
  double flops = 0;  // 2 · nnz of the matrix
  double memory_us = 0, issue_us = 0, tail_us = 0, atomic_us = 0, launch_us = 0;
  double lane_efficiency = 1;  // stored entries / (32 · warp steps): 1 when every lane is busy
  std::int64_t warp_steps = 0;
  std::int64_t max_warp_steps = 0;
  double gflops() const { return time_us > 0 ? flops / (time_us * 1e3) : 0.0; }
};

// `format_bytes` is the stored size of the optimized format (graph::stored_bytes); `val_bytes`
// the size of one value of x and y (8 for f64, 4 for f32, 2 for f16).
//
// SpMM (n >= 1 columns of B; n = 0 is SpMV): each part's kernel walks its sparse structure once per
// column tile of tn = Part::col_tile columns (grid y), so the format is streamed and the warp steps
// are taken ceil(n / tn) times; a step issues tn FMAs and tn / vec loads of B instead of one of
// each (its cost grows as 1 + (tn / vec - 1) / 2 + (tn - 1) / 8 of SpMV's step); B is read once
// when it fits in L2, else a row segment of max(tn values, 32 bytes) per entry and tile; C is
// written once; atomics add n values per result. Parts of one thread count run in one launch
// (horizontal fusion, codegen/fusion.hpp): one launch's overhead, their memory and issue times
// added, their tails overlapped (the atomics fusion adds where parts share rows are not priced).
// With COL_TILE lanes = L, a block covers L * tn columns (tiles = ceil(n / (L tn))), a round of
// 32 thread blocks costs its entries over the 32 / L groups (at least its longest block), a warp
// reduction adds only the groups, and an entry reads a B segment of L * tn values.
CostEstimate estimate_cost(const graph::MetadataSet& m, std::int64_t format_bytes, int val_bytes,
                           const DeviceSpec& dev = {}, std::int64_t n = 0);

// The pass an adding format runs before its kernels (Format::scales_output_first): y, or C's
// rows x n values, zeroed (a memset; scaled by beta when beta != 0). Half a launch, as a graph
// node of its own costs on an H100 (1.2-1.5 us, docs/benchmarks.md), plus writing the output
// once; `out_bytes` is one output value's size (8 for f64, else 4). Store-only formats and those
// whose storing part runs first have none.
double output_pass_us(std::int64_t rows, std::int64_t n, int out_bytes, const DeviceSpec& dev = {});

}  // namespace sparsetune::models
