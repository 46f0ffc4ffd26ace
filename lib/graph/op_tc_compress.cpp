// TC_COMPRESS: a part stored for tensor cores (MatXtract §4.1-4.2), in the place of COMPRESS and
// of the mapping. The rows are cut into chunks of 8 (the TC block height), each chunk keeps only
// the columns it uses, `width` to a TC block (4: fp64 m8n8k4; 8: fp16 m16n8k8). A chunk is a warp
// block of exactly 32 threads; thread l holds row l/4 of the chunk and, of each TC block, the
// width/4 slots (l/4, (width/4)·(l%4) + i): the fragment layout of the mma that multiplies it.
// The encoding is the dense unfolding (bitmaps; __popc finds a value) or the sparse encoding
// (rows padded per chunk, values and columns slot by slot), chosen by §4.2.4's storage criterion
// unless the graph names one. The arrays come from lib/core/crux.
#include "core/crux.hpp"
#include "graph/op_util.hpp"
#include "graph/part_csr.hpp"

namespace sparsetune::graph {

namespace {

constexpr int kTcH = 8;  // rows per chunk and TC block
enum Encoding { kAuto = 0, kDense = 1, kSparse = 2 };

// The local row of thread `lane` in chunk `k`, or -1 for the padding rows of the last chunk.
std::int64_t lane_row(std::int64_t k, int lane, std::int64_t rows) {
  const std::int64_t r = k * kTcH + lane / 4;
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
           "columns, 8 x width TC blocks as a dense unfolding or a sparse encoding";
  }
  std::vector<ParamSpec> params() const override {
    return {{"encoding", ParamType::Int, 0, 0, 2,
             "0: the storage criterion chooses; 1: dense unfolding (bitmaps); 2: sparse encoding"},
            {"width", ParamType::Int, 4, 4, 8,
             "columns per TC block: 4 (fp64 m8n8k4) or 8 (fp16 m16n8k8)"}};
  }
  std::string precondition(const GraphState& s, const nlohmann::json& p) const override {
    if (s.compressed) return "TC_COMPRESS takes the place of COMPRESS, once per part";
    if (s.op != "spmv") return "TC_COMPRESS serves op spmv";
    if (iparam(p, "width") != 4 && iparam(p, "width") != 8)
      return "width must be 4 (fp64 m8n8k4) or 8 (fp16 m16n8k8)";
    return "";
  }
  void advance(GraphState& s, const nlohmann::json& p) const override {
    s.compressed = true;
    s.blocked[1] = s.blocked[2] = true;  // chunks and lanes are fixed: no further mapping
    s.finest = 2;
    s.bmt_strided = true;
    s.tc_width = static_cast<int>(iparam(p, "width"));
  }
  std::vector<Part> apply(Part& part, const nlohmann::json& p) const override {
    const int w = static_cast<int>(iparam(p, "width"));
    crux::CruxSplit s;
    s.hot = part_csr(part);
    std::vector<char> used(part.cols, 0);
    for (auto c : s.hot.col_idx)
      if (!used[c]) used[c] = 1, s.hot_cols.push_back(c);
    const auto compressed = crux::tcu_compress(s, {kTcH, w});
    const auto enc = iparam(p, "encoding");
    // Bytes per value of the kernel's TC precision (fp64 or fp16), 32-bit indices.
    const int b_val = w == 4 ? 8 : 2;
    const bool dense =
        enc == kDense ||
        (enc == kAuto && crux::choose_storage(s, compressed, b_val, 4).dense_unfolding);
    part.row_entries.clear();
    part.nz.clear();
    part.blocks = {};
    if (dense)
      unfold(part, s, compressed, w);
    else
      encode(part, s, w);
    part.compressed = true;
    part.defined = {false, true, true};
    part.bmt_strided = true;
    part.tc_width = w;
    return {};
  }

 private:
  static void unfold(Part& part, const crux::CruxSplit& s, const crux::Compressed& c, int w) {
    const auto du = crux::dense_unfold(s, c);
    check_stored(part, static_cast<std::int64_t>(du.val.size()), "TC_COMPRESS");
    const std::int64_t chunks = static_cast<std::int64_t>(du.chunk_ptr.size()) - 1;
    part.nz.reserve(du.val.size());
    for (std::int64_t k = 0; k < chunks; ++k) {
      for (auto b = du.chunk_ptr[k]; b < du.chunk_ptr[k + 1]; ++b)
        for (int bit = 0; bit < kTcH * w; ++bit)
          if ((du.tc_bit[b] >> bit) & 1)
            part.nz.push_back(
                {k * kTcH + bit / w, du.tc_col[b * w + bit % w], du.val[part.nz.size()]});
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
    // A bitmap of 8·w bits is stored as w/4 words of 32 bits, low bits first, each the signed
    // integer of the same bits (32-bit indices hold it).
    std::vector<std::int64_t> words;
    words.reserve(du.tc_bit.size() * (w / 4));
    for (auto bits : du.tc_bit)
      for (int j = 0; j < w / 4; ++j)
        words.push_back(static_cast<std::int32_t>(static_cast<std::uint32_t>(bits >> (32 * j))));
    part.built[Arr::bmw_first_tc] = du.chunk_ptr;
    part.built[Arr::tc_bit] = std::move(words);
    part.built[Arr::tc_col] = du.tc_col;
    part.built[Arr::tc_ptr] = du.tc_ptr;
  }

  static void encode(Part& part, const crux::CruxSplit& s, int w) {
    const auto se = crux::sparse_encode(s, {kTcH, w});
    const auto stored = static_cast<std::int64_t>(se.val.size());
    check_stored(part, stored, "TC_COMPRESS");
    part.pad_entries += stored - s.hot.nnz();
    const std::int64_t chunks = static_cast<std::int64_t>(se.block_ptr.size()) - 1;
    const int per = w / 4, slots = kTcH * w;  // slots per lane and per TC block
    part.nz.resize(se.val.size());
    for (std::int64_t k = 0; k < chunks; ++k) {
      const std::int64_t begin = se.block_ptr[k], end = se.block_ptr[k + 1];
      const std::int64_t last = std::min(part.rows(), (k + 1) * kTcH) - 1;
      for (auto at = begin; at < end; ++at) {
        // Slot (r, c) of a block goes to lane l = 4r + c / per as its (c % per)-th value there,
        // stored 32 apart: lane l's entries are l, l + 32, l + 64, ... of the chunk (coalesced).
        // Padding rows of the last chunk count as its last row (their values are zero).
        const std::int64_t q = (at - begin) / slots, o = (at - begin) % slots;
        const std::int64_t r = o / w, c = o % w, l = 4 * r + c / per, i = c % per;
        part.nz[begin + q * slots + i * 32 + l] = {std::min(k * kTcH + r, last), se.col[at],
                                                   se.val[at]};
      }
      const std::int64_t steps = (end - begin) / 32;
      map_chunk(part, k, begin, end, [&](int l) {
        Block t;
        t.begin = t.first = begin + l;
        t.stride = 32;
        t.size = steps;
        t.end = steps ? t.first + (steps - 1) * t.stride + 1 : t.first;
        return t;
      });
    }
  }
};

}  // namespace

const Operator* make_tc_compress() {
  static TcCompress op;
  return &op;
}

}  // namespace sparsetune::graph
