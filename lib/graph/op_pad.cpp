// BMTB/BMW/BMT_PAD: append stored zeros to each block of a level so that sizes become regular
// (a multiple, or the largest size among the block's siblings). BMT_PAD can then interleave the
// threads of each parent: entry k of thread j is stored at parent_first + k * T + j (ELL/SELL).
#include <algorithm>

#include "graph/op_util.hpp"

namespace sparsetune::graph {

namespace {

class PadOp final : public Operator {
 public:
  explicit PadOp(Level level) : level_(level), name_(std::string(level_name(level)) + "_PAD") {}
  const char* name() const override { return name_.c_str(); }
  Stage stage() const override { return Stage::Mapping; }
  const char* summary() const override {
    return "Pad every block of the level with zeros to a multiple, or to its siblings' maximum";
  }
  std::vector<ParamSpec> params() const override {
    std::vector<ParamSpec> v = {
        {"multiple", ParamType::Int, 1, 1, 1 << 20, "round each block size up to a multiple"},
        {"to_max", ParamType::Bool, false, 0, 0,
         "first raise each block to the largest size among blocks of the same parent"}};
    if (level_ == Level::BMT)
      v.push_back({"interleave", ParamType::Bool, false, 0, 0,
                   "store the threads of each parent column-major (needs to_max)"});
    return v;
  }
  std::string precondition(const GraphState& s, const nlohmann::json& p) const override {
    if (auto r = mapping_rule(s); !r.empty()) return r;
    const int l = static_cast<int>(level_);
    if (!s.blocked[l])
      return std::string(level_name(level_)) + " must be blocked before it is padded";
    if (s.padded[l]) return std::string(level_name(level_)) + " is already padded";
    if (s.col_sorted) return "entries in column order (BMTB_COL_SORT) are not padded";
    if (s.finest > l) return "pad a level before cutting finer levels";
    if (s.bmt_strided) return "interleaved thread blocks cannot be padded";
    if (level_ == Level::BMT && p.at("interleave").get<bool>() && !p.at("to_max").get<bool>())
      return "interleave needs to_max (equal thread sizes within a parent)";
    return "";
  }
  void advance(GraphState& s, const nlohmann::json& p) const override {
    s.padded[static_cast<int>(level_)] = true;
    if (level_ == Level::BMT && p.at("interleave").get<bool>()) s.bmt_strided = true;
  }
  std::vector<Part> apply(Part& part, const nlohmann::json& p) const override {
    const int l = static_cast<int>(level_);
    auto& blocks = part.blocks[l];
    const std::int64_t m = iparam(p, "multiple");
    std::vector<std::int64_t> target(blocks.size());
    std::vector<std::int64_t> group_max;
    for (const auto& b : blocks) {
      const auto g = static_cast<std::size_t>(std::max<std::int64_t>(b.parent, 0));
      if (group_max.size() <= g) group_max.resize(g + 1, 0);
      group_max[g] = std::max(group_max[g], b.end - b.begin);
    }
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      std::int64_t t = blocks[i].end - blocks[i].begin;
      if (p.at("to_max").get<bool>()) t = group_max[std::max<std::int64_t>(blocks[i].parent, 0)];
      t = (t + m - 1) / m * m;
      if (blocks[i].row_lo < 0)
        t = blocks[i].end - blocks[i].begin;  // no row to attribute zeros to
      target[i] = t;
    }
    std::int64_t stored = static_cast<std::int64_t>(part.nz.size());
    for (std::size_t i = 0; i < blocks.size(); ++i)
      stored += target[i] - (blocks[i].end - blocks[i].begin);
    check_stored(part, stored, name());
    // Rebuild the stream block by block; blocks of the finest level cover it in order.
    std::vector<Entry> nz;
    nz.reserve(static_cast<std::size_t>(stored));
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      auto& b = blocks[i];
      const std::int64_t start = static_cast<std::int64_t>(nz.size());
      for (std::int64_t k = b.begin; k < b.end; ++k) nz.push_back(part.nz[k]);
      const std::int64_t col = b.end > b.begin ? part.nz[b.end - 1].col : 0;
      for (std::int64_t k = b.end - b.begin; k < target[i]; ++k) nz.push_back({b.row_hi, col, 0.0});
      part.pad_entries += target[i] - (b.end - b.begin);
      b.begin = b.first = start;
      b.end = static_cast<std::int64_t>(nz.size());
      b.size = b.end - b.begin;
      b.stride = 1;
    }
    part.nz = std::move(nz);
    refresh_ranges(part);
    if (level_ == Level::BMT && p.at("interleave").get<bool>()) interleave(part);
    return {};
  }

 private:
  // Column-major storage of the (equal-sized) threads of each parent.
  static void interleave(Part& part) {
    auto& bmt = part.blocks[static_cast<int>(Level::BMT)];
    std::vector<Entry> nz = part.nz;
    for (std::size_t i = 0; i < bmt.size();) {
      std::size_t j = i;
      while (j < bmt.size() && bmt[j].parent == bmt[i].parent) ++j;
      const std::int64_t t = static_cast<std::int64_t>(j - i), base = bmt[i].begin;
      for (std::size_t q = i; q < j; ++q) {
        auto& b = bmt[q];
        for (std::int64_t k = 0; k < b.size; ++k)
          nz[base + k * t + static_cast<std::int64_t>(q - i)] = part.nz[b.begin + k];
        b.first = base + static_cast<std::int64_t>(q - i);
        b.stride = t;
        b.begin = b.first;
        b.end = b.size > 0 ? b.first + (b.size - 1) * t + 1 : b.first;
      }
      i = j;
    }
    part.nz = std::move(nz);
    part.bmt_strided = true;
  }

  Level level_;
  std::string name_;
};

}  // namespace

const Operator* make_pad(Level level) {
  static std::vector<std::unique_ptr<PadOp>> all;
  all.push_back(std::make_unique<PadOp>(level));
  return all.back().get();
}

}  // namespace sparsetune::graph
