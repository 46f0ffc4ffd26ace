// TC_MMA_F64 and TC_MMA_F16: the implementing operators of a part TC_COMPRESS stored, one mma.sync
// per TC block per warp (MatXtract §4.3): fp64 m8n8k4 on 8 x 4 blocks, fp16 m16n8k8 with fp32
// accumulation on 8 x 8 blocks. Each lane gives its slots' values and x at their columns, so the
// diagonal of the product holds the rows' sums (tensor_core.hpp). Their CPU model runs the warp's
// whole instruction sequence register by register on the round's first lane.
#include <bit>
#include <cmath>

#include "graph/op_util.hpp"
#include "graph/tensor_core.hpp"

namespace sparsetune::graph {

void mma_m8n8k4_f64(const LaneValues& a, const LaneValues& b, LaneAccumulators& d) {
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < 2; ++i) {
      const int row = l / 4, col = 2 * (l % 4) + i;
      double acc = d[l][i];
      // A[row][k] is lane row·4 + k's; B[k][col] is lane col·4 + k's.
      for (int k = 0; k < 4; ++k) acc = std::fma(a[row * 4 + k], b[col * 4 + k], acc);
      d[l][i] = acc;
    }
}

void mma_m16n8k8_f16_f32(const HalfFragmentA& a, const HalfFragmentB& b, FloatAccumulators& d) {
  // A[m][k]: lane 4(m % 8) + k/2, register (k % 2) + 2(m / 8). B[k][n]: lane 4n + k/2, k % 2.
  auto A = [&](int m, int k) { return a[4 * (m % 8) + k / 2][k % 2 + 2 * (m / 8)]; };
  auto B = [&](int k, int n) { return b[4 * n + k / 2][k % 2]; };
  for (int l = 0; l < 32; ++l)
    for (int j = 0; j < 4; ++j) {
      const int row = l / 4 + 8 * (j / 2), col = 2 * (l % 4) + j % 2;
      double acc = d[l][j];
      for (int k = 0; k < 8; ++k) acc += A(row, k) * B(k, col);
      d[l][j] = static_cast<float>(acc);
    }
}

namespace {

// What a lane gives one mma: `per` (value, x at its column) pairs, per = width / 4.
struct Slots {
  std::array<std::array<double, 2>, 32> v{}, x{};
};

class TcMmaModel final : public ReductionModel {
 public:
  explicit TcMmaModel(int width) : w_(width), per_(width / 4) {}

  Pair thread(const FormatReader& f, const Cursor& c, const Emit&) override {
    if (c.lane == 0) run_warp(f, c);
    if (!c.t_active) return {};
    const int r = c.lane / 4;
    if (c.lane != diagonal_lane(r)) return {};
    return {f.at(Arr::bmt_row, c.bmt), d_[c.lane][diagonal_register(r)]};
  }

 private:
  void run_warp(const FormatReader& f, const Cursor& c) {
    d_ = {};
    if (!c.t_active) return;
    const std::int64_t t0 = c.bmt, t_end = f.at(Arr::bmw_first_bmt, c.bmw + 1);
    if (t0 != f.at(Arr::bmw_first_bmt, c.bmw) || t_end - t0 != 32)
      throw Error("format: a TC warp block has " + std::to_string(t_end - t0) + " threads, not 32");
    Slots s;
    if (f.has(Arr::tc_bit)) {
      const auto end = f.at(Arr::bmw_first_tc, c.bmw + 1);
      for (auto blk = f.at(Arr::bmw_first_tc, c.bmw); blk < end; ++blk) {
        std::uint64_t bits = 0;  // the block's 8·w bits from its w/4 words
        for (int j = 0; j < per_; ++j)
          bits |= std::uint64_t{static_cast<std::uint32_t>(f.at(Arr::tc_bit, blk * per_ + j))}
                  << (32 * j);
        for (int l = 0; l < 32; ++l)
          for (int i = 0; i < per_; ++i) {
            const int bit = per_ * l + i;  // slot (l/4, per·(l%4) + i)
            const bool set = (bits >> bit) & 1u;
            const int below = std::popcount(bits & ((std::uint64_t{1} << bit) - 1u));
            s.v[l][i] = set ? f.val(f.at(Arr::tc_ptr, blk) + below) : 0.0;
            s.x[l][i] = f.x(f.at(Arr::tc_col, blk * w_ + per_ * (l % 4) + i));
          }
        multiply(s);
      }
      return;
    }
    const auto size = f.at(Arr::bmt_size, t0);
    for (int l = 0; l < 32; ++l)
      if (f.at(Arr::bmt_size, t0 + l) != size || size % per_ != 0)
        throw Error("format: the lanes of a TC warp block hold unequal numbers of entries");
    for (std::int64_t k = 0; k < size; k += per_) {
      for (int l = 0; l < 32; ++l)
        for (int i = 0; i < per_; ++i) {
          const auto nz = f.at(Arr::bmt_first_nz, t0 + l) + (k + i) * f.at(Arr::bmt_stride, t0 + l);
          s.v[l][i] = f.val(nz);
          s.x[l][i] = f.x(f.at(Arr::nz_col, nz));
        }
      multiply(s);
    }
  }

  // One instruction; a slot without a value gives x = 0 (ST_MAC: it adds nothing).
  void multiply(const Slots& s) {
    if (per_ == 1) {
      LaneValues a{}, b{};
      for (int l = 0; l < 32; ++l) a[l] = s.v[l][0], b[l] = s.v[l][0] != 0.0 ? s.x[l][0] : 0.0;
      LaneAccumulators d;
      for (int l = 0; l < 32; ++l) d[l] = {d_[l][0], d_[l][1]};
      mma_m8n8k4_f64(a, b, d);
      for (int l = 0; l < 32; ++l) d_[l][0] = d[l][0], d_[l][1] = d[l][1];
      return;
    }
    HalfFragmentA a{};
    HalfFragmentB b{};
    for (int l = 0; l < 32; ++l)
      for (int i = 0; i < 2; ++i) {
        b[l][i] = s.v[l][i];
        a[l][i] = s.v[l][i] != 0.0 ? s.x[l][i] : 0.0;  // rows 8-15 of A stay zero
      }
    mma_m16n8k8_f16_f32(a, b, d_);
  }

  int w_, per_;
  FloatAccumulators d_{};  // fp64 m8n8k4 uses registers 0 and 1
};

class TcMma final : public ReductionOperator {
 public:
  TcMma(const char* name, int width, const char* fragment, const char* only_dtype,
        const char* summary)
      : name_(name),
        width_(width),
        fragment_(fragment),
        only_dtype_(only_dtype),
        summary_(summary) {}
  const char* name() const override { return name_; }
  const char* summary() const override { return summary_; }
  RedLevel level() const override { return RedLevel::Thread; }
  int tc_width() const override { return width_; }
  const char* only_dtype() const override { return only_dtype_; }
  std::vector<Arr> reads() const override {  // the sparse encoding
    return {Arr::bmt_first_nz, Arr::bmt_stride, Arr::bmt_size,
            Arr::bmt_row,      Arr::nz_col,     Arr::nz_val};
  }
  std::vector<Arr> reads(const Part& part) const override {
    if (!part.built.count(Arr::tc_bit)) return reads();
    return {Arr::bmt_row, Arr::nz_val, Arr::bmw_first_tc, Arr::tc_bit, Arr::tc_col, Arr::tc_ptr};
  }
  const char* fragment() const override { return fragment_; }
  std::unique_ptr<ReductionModel> model() const override {
    return std::make_unique<TcMmaModel>(width_);
  }
  void check(const Part& part) const override {
    // mma.sync is warp-wide: every warp block is one round of exactly 32 threads.
    if (part.tc_width != width_ || part.blocks[2].size() != 32 * part.blocks[1].size())
      throw DesignError(
          std::string(name_) +
          ": rule: the part must be stored by TC_COMPRESS(width=" + std::to_string(width_) + ")");
  }

 private:
  const char* name_;
  int width_;
  const char *fragment_, *only_dtype_, *summary_;
};

}  // namespace

const Operator* make_tc_mma_f64() {
  static TcMma op("TC_MMA_F64", 4, "tc_mma_f64", nullptr,
                  "Each warp multiplies its chunk's 8 x 4 TC blocks with x on fp64 tensor cores "
                  "(mma.sync m8n8k4); the diagonal of the product holds the rows' sums");
  return &op;
}
const Operator* make_tc_mma_f16() {
  static TcMma op("TC_MMA_F16", 8, "tc_mma_f16", "f16",
                  "Each warp multiplies its chunk's 8 x 8 TC blocks with x on fp16 tensor cores "
                  "with fp32 accumulation (mma.sync m16n8k8); the diagonal holds the rows' sums");
  return &op;
}

}  // namespace sparsetune::graph
