// TC_COMPRESS and TC_MMA_F64: a part stored for tensor cores (MatXtract §4.1-4.2) and its fp64
// mma.sync implementation. TC_COMPRESS takes the place of COMPRESS and of the mapping: the rows are
// cut into chunks of 8 (the TC block height), each chunk keeps only the columns it uses, and a
// chunk is a warp block of exactly 32 threads, thread l holding slot (row l/4, column l%4) of each
// 8 x 4 TC block. Its encoding is the dense unfolding (a bitmap per TC block, __popc finds the
// value) or the sparse encoding (rows padded per chunk, values and columns slot by slot), chosen
// by §4.2.4's storage criterion unless the graph names one. The arrays come from lib/core/crux.
#include <bit>
#include <cmath>

#include "core/crux.hpp"
#include "graph/op_util.hpp"
#include "graph/part_csr.hpp"
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

namespace {

constexpr int kTcH = 8, kTcW = 4;  // fp64 m8n8k4: 8 rows × 4 columns per TC block
enum Encoding { kAuto = 0, kDense = 1, kSparse = 2 };

// The local row of thread `lane` in chunk `k`, or -1 for the padding rows of the last chunk.
std::int64_t lane_row(std::int64_t k, int lane, std::int64_t rows) {
  const std::int64_t r = k * kTcH + lane / kTcW;
  return r < rows ? r : -1;
}

// The warp block of chunk k and its 32 threads; `thread_range` gives thread l's entries.
template <class ThreadRange>
void map_chunk(Part& part, std::int64_t k, std::int64_t begin, std::int64_t end,
               ThreadRange thread_range) {
  Block w;
  w.begin = w.first = begin;
  w.end = end;
  w.size = end - begin;
  w.row_lo = k * kTcH;
  w.row_hi = std::min(part.rows(), (k + 1) * kTcH) - 1;
  part.blocks[1].push_back(w);
  for (int l = 0; l < 32; ++l) {
    Block t = thread_range(l);
    t.parent = k;
    t.row_lo = t.row_hi = lane_row(k, l, part.rows());
    part.blocks[2].push_back(t);
  }
}

class TcCompress final : public Operator {
 public:
  const char* name() const override { return "TC_COMPRESS"; }
  // It compresses and maps at once (chunks to warps, slots to lanes), in the place of COMPRESS.
  Stage stage() const override { return Stage::Mapping; }
  const char* summary() const override {
    return "Store the part for tensor cores: chunks of 8 rows (a warp each) keep only their "
           "columns, 8 x 4 TC blocks as a dense unfolding or a sparse encoding";
  }
  std::vector<ParamSpec> params() const override {
    return {{"encoding", ParamType::Int, 0, 0, 2,
             "0: the storage criterion chooses; 1: dense unfolding (bitmaps); 2: sparse encoding"}};
  }
  std::string precondition(const GraphState& s, const nlohmann::json&) const override {
    if (s.compressed) return "TC_COMPRESS takes the place of COMPRESS, once per part";
    if (s.op != "spmv") return "TC_COMPRESS serves op spmv";
    return "";
  }
  void advance(GraphState& s, const nlohmann::json&) const override {
    s.compressed = true;
    s.blocked[1] = s.blocked[2] = true;  // chunks and lanes are fixed: no further mapping
    s.finest = 2;
    s.bmt_strided = true;
    s.tc_width = kTcW;
  }
  std::vector<Part> apply(Part& part, const nlohmann::json& p) const override {
    crux::CruxSplit s;
    s.hot = part_csr(part);
    std::vector<char> used(part.cols, 0);
    for (auto c : s.hot.col_idx)
      if (!used[c]) used[c] = 1, s.hot_cols.push_back(c);
    const auto compressed = crux::tcu_compress(s, {kTcH, kTcW});
    const auto enc = iparam(p, "encoding");
    // Bytes per value and index of the fp64 TC kernel with 32-bit indices.
    const bool dense = enc == kDense ||
                       (enc == kAuto && crux::choose_storage(s, compressed, 8, 4).dense_unfolding);
    part.row_entries.clear();
    part.nz.clear();
    part.blocks = {};
    if (dense)
      unfold(part, s, compressed);
    else
      encode(part, s);
    part.compressed = true;
    part.defined = {false, true, true};
    part.bmt_strided = true;
    part.tc_width = kTcW;
    return {};
  }

 private:
  static void unfold(Part& part, const crux::CruxSplit& s, const crux::Compressed& c) {
    const auto du = crux::dense_unfold(s, c);
    check_stored(part, static_cast<std::int64_t>(du.val.size()), "TC_COMPRESS");
    const std::int64_t chunks = static_cast<std::int64_t>(du.chunk_ptr.size()) - 1;
    part.nz.reserve(du.val.size());
    for (std::int64_t k = 0; k < chunks; ++k) {
      for (auto b = du.chunk_ptr[k]; b < du.chunk_ptr[k + 1]; ++b)
        for (int bit = 0; bit < kTcH * kTcW; ++bit)
          if ((du.tc_bit[b] >> bit) & 1)
            part.nz.push_back(
                {k * kTcH + bit / kTcW, du.tc_col[b * kTcW + bit % kTcW], du.val[part.nz.size()]});
      const std::int64_t begin = du.tc_ptr[du.chunk_ptr[k]], end = du.tc_ptr[du.chunk_ptr[k + 1]];
      // A lane finds its entries through the bitmaps, not as a range: its block spans the chunk.
      map_chunk(part, k, begin, end, [&](int) {
        Block t;
        t.begin = t.first = begin;
        t.end = end;
        t.size = 0;
        return t;
      });
    }
    std::vector<std::int64_t> bits;
    bits.reserve(du.tc_bit.size());
    // A 32-bit bitmap is stored as the signed integer of the same bits (32-bit indices hold it).
    for (auto w : du.tc_bit)
      bits.push_back(
          static_cast<std::int64_t>(static_cast<std::int32_t>(static_cast<std::uint32_t>(w))));
    part.built[Arr::bmw_first_tc] = du.chunk_ptr;
    part.built[Arr::tc_bit] = std::move(bits);
    part.built[Arr::tc_col] = du.tc_col;
    part.built[Arr::tc_ptr] = du.tc_ptr;
  }

  static void encode(Part& part, const crux::CruxSplit& s) {
    const auto se = crux::sparse_encode(s, {kTcH, kTcW});
    const auto stored = static_cast<std::int64_t>(se.val.size());
    check_stored(part, stored, "TC_COMPRESS");
    part.pad_entries += stored - s.hot.nnz();
    const std::int64_t chunks = static_cast<std::int64_t>(se.block_ptr.size()) - 1;
    part.nz.reserve(se.val.size());
    for (std::int64_t k = 0; k < chunks; ++k) {
      const std::int64_t begin = se.block_ptr[k], end = se.block_ptr[k + 1];
      const std::int64_t last = std::min(part.rows(), (k + 1) * kTcH) - 1;
      for (auto at = begin; at < end; ++at) {
        // Slot (row r, column c) of a block is entry r·4 + c: lane l's entries are l, l + 32, ...
        // Padding rows of the last chunk count as its last row (their values are zero).
        const std::int64_t r = k * kTcH + ((at - begin) / kTcW) % kTcH;
        part.nz.push_back({std::min(r, last), se.col[at], se.val[at]});
      }
      const std::int64_t steps = (end - begin) / (kTcH * kTcW);
      map_chunk(part, k, begin, end, [&](int l) {
        Block t;
        t.begin = t.first = begin + l;
        t.stride = kTcH * kTcW;
        t.size = steps;
        t.end = steps ? t.first + (steps - 1) * t.stride + 1 : t.first;
        return t;
      });
    }
  }
};

// The CPU model: on a round's first lane it runs the whole warp's mma.sync sequence through
// mma_m8n8k4_f64, then hands each lane its diagonal register.
class TcMmaModel final : public ReductionModel {
 public:
  Pair thread(const FormatReader& f, const Cursor& c, const Emit&) override {
    if (c.lane == 0) multiply(f, c);
    if (!c.t_active) return {};
    const int r = c.lane / 4;
    if (c.lane != diagonal_lane(r)) return {};
    return {f.at(Arr::bmt_row, c.bmt), d_[c.lane][diagonal_register(r)]};
  }

 private:
  void multiply(const FormatReader& f, const Cursor& c) {
    d_ = {};
    if (!c.t_active) return;
    const std::int64_t t0 = c.bmt, t_end = f.at(Arr::bmw_first_bmt, c.bmw + 1);
    if (t0 != f.at(Arr::bmw_first_bmt, c.bmw) || t_end - t0 != 32)
      throw Error("format: a TC warp block has " + std::to_string(t_end - t0) + " threads, not 32");
    LaneValues a{}, b{};
    if (f.has(Arr::tc_bit)) {
      const auto end = f.at(Arr::bmw_first_tc, c.bmw + 1);
      for (auto blk = f.at(Arr::bmw_first_tc, c.bmw); blk < end; ++blk) {
        const auto bits = static_cast<std::uint32_t>(f.at(Arr::tc_bit, blk));
        for (int l = 0; l < 32; ++l) {
          const bool set = (bits >> l) & 1u;
          const int below = std::popcount(bits & ((std::uint32_t{1} << l) - 1u));
          a[l] = set ? f.val(f.at(Arr::tc_ptr, blk) + below) : 0.0;
          const double xv = f.x(f.at(Arr::tc_col, blk * kTcW + l % kTcW));
          b[l] = a[l] != 0.0 ? xv : 0.0;  // a slot without a value adds nothing (ST_MAC)
        }
        mma_m8n8k4_f64(a, b, d_);
      }
      return;
    }
    const auto steps = f.at(Arr::bmt_size, t0);
    for (int l = 0; l < 32; ++l)
      if (f.at(Arr::bmt_size, t0 + l) != steps)
        throw Error("format: the lanes of a TC warp block hold unequal numbers of entries");
    for (std::int64_t k = 0; k < steps; ++k) {
      for (int l = 0; l < 32; ++l) {
        const auto nz = f.at(Arr::bmt_first_nz, t0 + l) + k * f.at(Arr::bmt_stride, t0 + l);
        a[l] = f.val(nz);
        const double xv = f.x(f.at(Arr::nz_col, nz));
        b[l] = a[l] != 0.0 ? xv : 0.0;
      }
      mma_m8n8k4_f64(a, b, d_);
    }
  }

  LaneAccumulators d_{};
};

class TcMmaF64 final : public ReductionOperator {
 public:
  const char* name() const override { return "TC_MMA_F64"; }
  const char* summary() const override {
    return "Each warp multiplies its chunk's 8 x 4 TC blocks with x on fp64 tensor cores "
           "(mma.sync m8n8k4); the diagonal of the product holds the rows' sums";
  }
  RedLevel level() const override { return RedLevel::Thread; }
  int tc_width() const override { return kTcW; }
  std::vector<Arr> reads() const override {  // the sparse encoding
    return {Arr::bmt_first_nz, Arr::bmt_stride, Arr::bmt_size,
            Arr::bmt_row,      Arr::nz_col,     Arr::nz_val};
  }
  std::vector<Arr> reads(const Part& part) const override {
    if (!part.built.count(Arr::tc_bit)) return reads();
    return {Arr::bmt_row, Arr::nz_val, Arr::bmw_first_tc, Arr::tc_bit, Arr::tc_col, Arr::tc_ptr};
  }
  const char* fragment() const override { return "tc_mma_f64"; }
  std::unique_ptr<ReductionModel> model() const override { return std::make_unique<TcMmaModel>(); }
  void check(const Part& part) const override {
    // mma.sync is warp-wide: every warp block is one round of exactly 32 threads.
    const auto& w = part.blocks[1];
    if (part.tc_width != kTcW || part.blocks[2].size() != 32 * w.size())
      throw DesignError(std::string(name()) + ": rule: the part must be stored by TC_COMPRESS");
  }
};

}  // namespace

const Operator* make_tc_compress() {
  static TcCompress op;
  return &op;
}
const Operator* make_tc_mma_f64() {
  static TcMmaF64 op;
  return &op;
}

}  // namespace sparsetune::graph
