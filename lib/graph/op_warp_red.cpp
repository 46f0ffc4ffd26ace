// Warp-level reductions over the 32 results of a round of threads, by register shuffles:
// WARP_TOTAL_RED (one row per BMW), WARP_SEG_RED (segmented scan, the last lane of each row
// emits) and WARP_BITMAP_RED (a ballot of row starts, each row's first lane emits).
#include "graph/op_util.hpp"

namespace sparsetune::graph {

namespace {

class WarpTotalModel final : public ReductionModel {
 public:
  void round(const FormatReader&, const Cursor&, std::array<Pair, 32>& lanes,
             const Emit&) override {
    for (int l = 0; l < 32; ++l) acc_[l] += lanes[l].v;
  }
  void end_bmw(const FormatReader& f, const Cursor& c, const Emit& out) override {
    // With COL_TILE lanes, the lanes of a group hold the same sums for their own columns: only
    // the groups are added (none when a warp is one group).
    for (int off = 16; off >= c.lanes; off /= 2) {
      std::array<double, 32> next{};
      for (int l = 0; l < 32; ++l) next[l] = acc_[l] + acc_[l ^ off];
      acc_ = next;
    }
    if (c.w_active) out(c.warp * 32, f.at(Arr::bmw_row, c.bmw), acc_[0]);
    acc_.fill(0.0);
  }

 private:
  std::array<double, 32> acc_{};
};

class WarpSegModel final : public ReductionModel {
 public:
  void round(const FormatReader&, const Cursor& c, std::array<Pair, 32>& lanes,
             const Emit& out) override {
    std::array<double, 32> v{};
    std::array<bool, 32> f{};
    for (int l = 0; l < 32; ++l) {
      v[l] = lanes[l].v;
      f[l] = l == 0 || lanes[l - 1].row != lanes[l].row;
    }
    for (int d = 1; d < 32; d *= 2) {
      auto v2 = v;
      auto f2 = f;
      for (int l = d; l < 32; ++l)
        if (!f[l]) v2[l] = v[l - d] + v[l], f2[l] = f[l - d];
      v = v2;
      f = f2;
    }
    for (int l = 0; l < 32; ++l) {
      const bool tail = l == 31 || lanes[l + 1].row != lanes[l].row;
      if (tail && lanes[l].row >= 0) out(c.warp * 32 + l, lanes[l].row, v[l]);
    }
  }
};

class WarpBitmapModel final : public ReductionModel {
 public:
  void round(const FormatReader&, const Cursor& c, std::array<Pair, 32>& lanes,
             const Emit& out) override {
    std::uint32_t bits = 0;
    for (int l = 0; l < 32; ++l)
      if (l == 0 || lanes[l - 1].row != lanes[l].row) bits |= 1u << l;
    std::array<int, 32> seg_end{};
    for (int l = 0; l < 32; ++l) {
      const std::uint32_t above = l == 31 ? 0u : bits & ~((2u << l) - 1u);
      seg_end[l] = above ? __builtin_ctz(above) - 1 : 31;
    }
    std::array<double, 32> v{};
    for (int l = 0; l < 32; ++l) v[l] = lanes[l].v;
    for (int d = 1; d < 32; d *= 2) {
      auto v2 = v;
      for (int l = 0; l < 32; ++l)
        if (l + d <= seg_end[l]) v2[l] = v[l] + v[l + d];
      v = v2;
    }
    for (int l = 0; l < 32; ++l)
      if ((bits >> l & 1u) && lanes[l].row >= 0) out(c.warp * 32 + l, lanes[l].row, v[l]);
  }
};

class WarpTotalRed final : public ReductionOperator {
 public:
  const char* name() const override { return "WARP_TOTAL_RED"; }
  const char* summary() const override {
    return "The warp adds all its threads' results into one (its BMW holds one row)";
  }
  RedLevel level() const override { return RedLevel::Warp; }
  std::vector<Arr> reads() const override { return {Arr::bmw_row}; }
  const char* fragment() const override { return "warp_total_red"; }
  std::unique_ptr<ReductionModel> model() const override {
    return std::make_unique<WarpTotalModel>();
  }
  void check(const Part& part) const override { require_one_row(part, Level::BMW, name()); }
  bool serves_lane_groups() const override { return true; }  // bmw_end_lanes
};

class WarpSegRed final : public ReductionOperator {
 public:
  const char* name() const override { return "WARP_SEG_RED"; }
  const char* summary() const override {
    return "Segmented sum by row across the warp's lanes; the last lane of each row emits";
  }
  RedLevel level() const override { return RedLevel::Warp; }
  std::vector<Arr> reads() const override { return {}; }
  const char* fragment() const override { return "warp_seg_red"; }
  std::unique_ptr<ReductionModel> model() const override {
    return std::make_unique<WarpSegModel>();
  }
};

class WarpBitmapRed final : public ReductionOperator {
 public:
  const char* name() const override { return "WARP_BITMAP_RED"; }
  const char* summary() const override {
    return "A ballot bitmap of row starts bounds a shuffle-down sum; the first lane of each row "
           "emits";
  }
  RedLevel level() const override { return RedLevel::Warp; }
  std::vector<Arr> reads() const override { return {}; }
  const char* fragment() const override { return "warp_bitmap_red"; }
  std::unique_ptr<ReductionModel> model() const override {
    return std::make_unique<WarpBitmapModel>();
  }
};

}  // namespace

const Operator* make_warp_total_red() {
  static WarpTotalRed op;
  return &op;
}
const Operator* make_warp_seg_red() {
  static WarpSegRed op;
  return &op;
}
const Operator* make_warp_bitmap_red() {
  static WarpBitmapRed op;
  return &op;
}

}  // namespace sparsetune::graph
