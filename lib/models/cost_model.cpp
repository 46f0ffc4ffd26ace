#include "models/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace sparsetune::models {

namespace {

struct PartWork {
  std::int64_t steps = 0;       // warp steps, all warps
  std::int64_t max_warp = 0;    // the busiest warp's steps
  std::int64_t warps = 0;       // warps launched
  std::int64_t atomic_out = 0;  // results added to y atomically
};

PartWork part_work(const graph::Part& p) {
  PartWork w;
  const auto& bmtb = p.blocks[0];
  const auto& bmw = p.blocks[1];
  const auto& bmt = p.blocks[2];
  // Steps of each warp block: its threads in rounds of 32 lanes, a round as long as its longest.
  std::vector<std::int64_t> bmw_steps(bmw.size(), 0);
  std::vector<std::int64_t> round_max(bmw.size(), 0);
  std::vector<int> lane(bmw.size(), 0);
  // SpMM's COL_TILE lanes: groups of L lanes walk the round's thread blocks one after another,
  // so a round costs about its entries over the 32 / L groups (at least its longest block).
  const std::int64_t lanes = std::max(1, p.col_lanes);
  std::vector<std::int64_t> round_sum(lanes > 1 ? bmw.size() : 0, 0);
  const auto round_steps = [&](std::size_t i) {
    return lanes > 1 ? std::max(round_max[i], (round_sum[i] * lanes + 31) / 32) : round_max[i];
  };
  for (const auto& t : bmt) {
    if (t.parent < 0 || t.parent >= static_cast<std::int64_t>(bmw.size())) continue;
    const auto i = static_cast<std::size_t>(t.parent);
    round_max[i] = std::max(round_max[i], t.size);
    if (lanes > 1) round_sum[i] += t.size;
    if (++lane[i] == 32) {
      bmw_steps[i] += round_steps(i), round_max[i] = 0, lane[i] = 0;
      if (lanes > 1) round_sum[i] = 0;
    }
  }
  // Reductions above the thread level cost steps of their own: five shuffles per warp block, and
  // for a shared-memory reduction a barrier and a tree over the block, per warp.
  std::int64_t red_steps = 0;
  for (const auto& r : p.reductions) {
    if (r.rfind("WARP", 0) == 0)  // across the groups only, with COL_TILE lanes
      red_steps += lanes == 1 ? 5 : lanes == 2 ? 4 : lanes == 4 ? 3 : lanes == 8 ? 2 : lanes == 16;
    if (r.rfind("SHMEM", 0) == 0) red_steps += 8;
  }
  for (std::size_t i = 0; i < bmw.size(); ++i) bmw_steps[i] += round_steps(i) + red_steps;
  // A CUDA block's warps take its warp blocks in turn; the busiest warp ends the block.
  const std::int64_t wpb = std::max(1, p.threads / 32);
  std::vector<std::vector<std::int64_t>> per_warp(bmtb.size());
  std::vector<std::int64_t> next(bmtb.size(), 0);
  for (std::size_t i = 0; i < bmw.size(); ++i) {
    w.steps += bmw_steps[i];
    const auto b = bmw[i].parent;
    if (b < 0 || b >= static_cast<std::int64_t>(bmtb.size())) continue;
    auto& v = per_warp[static_cast<std::size_t>(b)];
    if (v.empty()) v.assign(static_cast<std::size_t>(wpb), 0);
    v[static_cast<std::size_t>(next[b]++ % wpb)] += bmw_steps[i];
  }
  for (const auto& v : per_warp)
    for (auto s : v) w.max_warp = std::max(w.max_warp, s);
  w.warps = static_cast<std::int64_t>(bmtb.size()) * wpb;
  const bool atomic =
      std::find(p.reductions.begin(), p.reductions.end(), "GMEM_ATOM_RED") != p.reductions.end();
  if (atomic) {
    // The coarsest level before the global one sends one result per row it covers.
    const auto& level =
        p.reductions.size() >= 2 && p.reductions[p.reductions.size() - 2].rfind("SHMEM", 0) == 0
            ? bmtb
        : p.reductions.size() >= 2 && p.reductions[p.reductions.size() - 2].rfind("WARP", 0) == 0
            ? bmw
            : bmt;
    for (const auto& b : level)
      if (b.row_lo >= 0) w.atomic_out += b.row_hi - b.row_lo + 1;
  }
  return w;
}

// SpMM's estimate (see cost_model.hpp): SpMV's terms per column tile, with B's and C's traffic.
CostEstimate estimate_spmm_cost(const graph::MetadataSet& m, std::int64_t format_bytes,
                                int val_bytes, const DeviceSpec& dev, std::int64_t n) {
  CostEstimate c;
  const double nd = static_cast<double>(n), vb = static_cast<double>(val_bytes);
  c.flops = 2.0 * static_cast<double>(m.nnz) * nd;
  const double b_bytes = static_cast<double>(m.cols) * nd * vb;
  std::int64_t stored = 0, steps = 0;
  double tail_max = 0;
  int launches = 0, threads = 0;
  bool fusable = true;
  for (const auto& p : m.parts) stored += static_cast<std::int64_t>(p.nz.size());
  for (const auto& p : m.parts) {
    if (p.nz.empty()) continue;
    const auto nz = static_cast<double>(p.nz.size());
    const PartWork w = part_work(p);
    const std::int64_t tn = std::max(1, p.col_tile), vec = std::max(1, p.col_vec);
    const std::int64_t span = tn * std::max(1, p.col_lanes);  // columns of a block (grid y)
    const double tiles = static_cast<double>((n + span - 1) / span);
    const double step =
        1.0 + (static_cast<double>(tn / vec) - 1.0) / 2.0 + (static_cast<double>(tn) - 1.0) / 8.0;
    double bytes = stored > 0 ? static_cast<double>(format_bytes) * nz / stored * tiles : 0.0;
    bytes += b_bytes <= static_cast<double>(dev.l2_bytes)
                 ? std::min(b_bytes, nz * nd * vb)
                 : nz * tiles * std::max(static_cast<double>(span) * vb, 32.0);
    bytes += static_cast<double>(p.rows()) * nd * vb;
    const double warps = static_cast<double>(w.warps) * tiles;
    const double full = static_cast<double>(dev.sms) * dev.saturating_warps_per_sm;
    const double fill = std::max(std::min(warps, full) / full, 1.0 / 64.0);
    const double memory_us = bytes / (dev.bandwidth_gbs * fill * 1e3);
    const double issue_us =
        static_cast<double>(w.steps) * tiles * step * dev.warp_step_ns / dev.sms / 1e3;
    const double tail_us = static_cast<double>(w.max_warp) * step * dev.serial_step_ns / 1e3;
    const double atomic_us = static_cast<double>(w.atomic_out) * nd / dev.atomics_per_ns / 1e3;
    c.bytes += bytes;
    c.memory_us += memory_us;
    c.issue_us += issue_us;
    c.tail_us += tail_us;
    c.atomic_us += atomic_us;
    c.launch_us += dev.launch_us;
    steps += w.steps;
    c.warp_steps += static_cast<std::int64_t>(static_cast<double>(w.steps) * tiles);
    c.max_warp_steps = std::max(c.max_warp_steps, w.max_warp);
    c.time_us += dev.launch_us + std::max({memory_us, issue_us, tail_us}) + atomic_us;
    tail_max = std::max(tail_max, tail_us);
    ++launches;
    fusable = fusable && (threads == 0 || threads == p.threads);
    threads = p.threads;
  }
  // Parts of one thread count run in one launch (codegen/fusion.hpp): one launch's overhead,
  // their memory and issue times add up, their tails overlap.
  if (fusable && launches >= 2)
    c.time_us = dev.launch_us + std::max({c.memory_us, c.issue_us, tail_max}) + c.atomic_us;
  if (c.time_us == 0) c.time_us = dev.launch_us;
  c.lane_efficiency =
      steps > 0 ? static_cast<double>(stored) / (32.0 * static_cast<double>(steps)) : 1.0;
  return c;
}

}  // namespace

CostEstimate estimate_cost(const graph::MetadataSet& m, std::int64_t format_bytes, int val_bytes,
                           const DeviceSpec& dev, std::int64_t n) {
  if (n >= 1) return estimate_spmm_cost(m, format_bytes, val_bytes, dev, n);
  CostEstimate c;
  c.flops = 2.0 * static_cast<double>(m.nnz);
  // x once if it stays in L2, else a sector-sized share of it per gathered entry; y once.
  const double x_bytes = static_cast<double>(m.cols) * val_bytes;
  const double vb = static_cast<double>(val_bytes);
  std::int64_t stored = 0;
  for (const auto& p : m.parts) stored += static_cast<std::int64_t>(p.nz.size());
  for (const auto& p : m.parts) {
    const auto nz = static_cast<double>(p.nz.size());
    if (p.nz.empty()) continue;
    const PartWork w = part_work(p);
    // The part's share of the format, its gathers of x and its writes of y.
    double bytes = stored > 0 ? static_cast<double>(format_bytes) * nz / stored : 0.0;
    bytes += x_bytes <= static_cast<double>(dev.l2_bytes)
                 ? std::min(x_bytes, nz * vb)
                 : nz * std::max(vb, 32.0 / 4.0);  // a quarter sector per miss
    bytes += static_cast<double>(p.rows()) * vb;
    const double in_flight = static_cast<double>(std::min<std::int64_t>(
        w.warps, static_cast<std::int64_t>(dev.sms) * dev.saturating_warps_per_sm));
    const double fill = std::max(
        in_flight / (static_cast<double>(dev.sms) * dev.saturating_warps_per_sm), 1.0 / 64.0);
    const double memory_us = bytes / (dev.bandwidth_gbs * fill * 1e3);
    const double issue_us = static_cast<double>(w.steps) * dev.warp_step_ns / dev.sms / 1e3;
    const double tail_us = static_cast<double>(w.max_warp) * dev.serial_step_ns / 1e3;
    const double atomic_us = static_cast<double>(w.atomic_out) / dev.atomics_per_ns / 1e3;
    c.bytes += bytes;
    c.memory_us += memory_us;
    c.issue_us += issue_us;
    c.tail_us += tail_us;
    c.atomic_us += atomic_us;
    c.launch_us += dev.launch_us;
    c.warp_steps += w.steps;
    c.max_warp_steps = std::max(c.max_warp_steps, w.max_warp);
    c.time_us += dev.launch_us + std::max({memory_us, issue_us, tail_us}) + atomic_us;
  }
  if (c.time_us == 0) c.time_us = dev.launch_us;  // nothing stored: one empty launch
  c.lane_efficiency = c.warp_steps > 0
                          ? static_cast<double>(stored) / (32.0 * static_cast<double>(c.warp_steps))
                          : 1.0;
  return c;
}

double output_pass_us(std::int64_t rows, std::int64_t n, int out_bytes, const DeviceSpec& dev) {
  const double bytes = static_cast<double>(rows) *
                       static_cast<double>(std::max<std::int64_t>(n, 1)) *
                       static_cast<double>(out_bytes);
  return 0.5 * dev.launch_us + bytes / (dev.bandwidth_gbs * 1e3);
}

}  // namespace sparsetune::models
