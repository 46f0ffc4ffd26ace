// BMTB/BMW/BMT × ROW/COL/NNZ_BLOCK: cut each parent (the part, or the blocks of the nearest
// coarser level already cut) into blocks mapped to thread blocks, warps or threads. Coarser levels
// are cut first; a level left uncut is implied when the part is finished (see designer.cpp).
#include <algorithm>

#include "graph/op_util.hpp"

namespace sparsetune::graph {

namespace {

enum class Cut { Row, Col, Nnz };

const char* cut_name(Cut c) { return c == Cut::Row ? "ROW" : c == Cut::Col ? "COL" : "NNZ"; }

class BlockOp final : public Operator {
 public:
  BlockOp(Level level, Cut cut)
      : level_(level),
        cut_(cut),
        name_(std::string(level_name(level)) + "_" + cut_name(cut) + "_BLOCK") {}
  const char* name() const override { return name_.c_str(); }
  Stage stage() const override { return Stage::Mapping; }
  const char* summary() const override {
    switch (cut_) {
      case Cut::Row:
        return "Cut each parent into groups of whole rows (a count, or up to max_nnz)";
      case Cut::Col:
        return "Cut each row of each parent into column tiles";
      case Cut::Nnz:
        return "Cut each parent into runs of consecutive non-zeros";
    }
    return "";
  }
  std::vector<ParamSpec> params() const override {
    switch (cut_) {
      case Cut::Row: {
        std::vector<ParamSpec> v = {
            {"rows", ParamType::Int, 1, 1, 1 << 30, "rows per block"},
            {"max_nnz", ParamType::Int, 0, 0, 1 << 30,
             "if > 0: pack whole rows while the block holds at most this many non-zeros"},
            {"max_rows", ParamType::Int, 0, 0, 1 << 30,
             "with max_nnz: if > 0, at most this many rows a block too (a shared accumulator "
             "per row)",
             true}};
        if (level_ == Level::BMT) {
          v.push_back({"lanes", ParamType::Int, 1, 1, 32,
                       "threads sharing each row (rows = 1): a row's entries split among them"});
          v.push_back({"interleave", ParamType::Bool, false, 0, 0,
                       "with lanes > 1: lane j takes the row's entries j, j+lanes, ... "
                       "(coalesced), else a run of ceil(len/lanes) consecutive entries"});
        }
        return v;
      }
      case Cut::Col:
        return {{"cols", ParamType::Int, 64, 1, 4.0e18, "columns per tile"}};
      case Cut::Nnz: {
        std::vector<ParamSpec> v = {
            {"nnz", ParamType::Int, 4, 1, 1 << 30, "non-zeros per block"},
            {"count_rows", ParamType::Bool, false, 0, 0,
             "merge-path balance: every row boundary crossed costs one unit like a non-zero"}};
        if (level_ == Level::BMT)
          v.push_back({"interleave", ParamType::Bool, false, 0, 0,
                       "thread j of a parent takes its entries j, j+T, j+2T, ... (coalesced)"});
        return v;
      }
    }
    return {};
  }
  std::string precondition(const GraphState& s, const nlohmann::json& p) const override {
    if (auto r = mapping_rule(s); !r.empty()) return r;
    const int l = static_cast<int>(level_);
    if (s.blocked[l]) return std::string(level_name(level_)) + " is already blocked";
    if (s.finest > l)
      return std::string("a ") + level_name(static_cast<Level>(s.finest)) +
             " block cannot be split into " + level_name(level_) +
             " blocks: coarser levels are cut first";
    if (s.col_sorted && (cut_ != Cut::Nnz || p.at("count_rows").get<bool>()))
      return "BMTB_COL_SORT put the entries in column order: only *_NNZ_BLOCK without count_rows "
             "cuts them further";
    if (cut_ == Cut::Nnz && p.at("count_rows").get<bool>() && level_ == Level::BMT &&
        p.at("interleave").get<bool>())
      return "count_rows and interleave exclude each other";
    if (cut_ == Cut::Row && p.contains("max_rows") && iparam(p, "max_rows") > 0 &&
        iparam(p, "max_nnz") == 0)
      return "max_rows caps the rows that max_nnz packs: it needs max_nnz > 0";
    if (cut_ == Cut::Row && level_ == Level::BMT && iparam(p, "lanes") > 1 &&
        (iparam(p, "rows") != 1 || iparam(p, "max_nnz") != 0))
      return "lanes > 1 needs rows = 1 and max_nnz = 0 (the lanes share one row)";
    return "";
  }
  void advance(GraphState& s, const nlohmann::json& p) const override {
    const int l = static_cast<int>(level_);
    s.blocked[l] = true;
    s.finest = std::max(s.finest, l);
    if (level_ == Level::BMTB) s.bmtb_kind = cut_name(cut_);
    if (level_ == Level::BMT && strided(p)) s.bmt_strided = true;
  }
  std::vector<Part> apply(Part& part, const nlohmann::json& p) const override {
    const auto spans = parent_spans(part, level_);
    std::vector<Block> out;
    out.reserve(expected_blocks(part, p, spans.size()));  // no regrowth of a large cut
    for (std::size_t s = 0; s < spans.size(); ++s) {
      const auto before = out.size();
      switch (cut_) {
        case Cut::Row:
          cut_rows(part, spans[s], p, out);
          break;
        case Cut::Col:
          cut_cols(part, spans[s], p, out);
          break;
        case Cut::Nnz:
          cut_nnz(part, spans[s], p, out);
          break;
      }
      for (auto i = before; i < out.size(); ++i) out[i].parent = static_cast<std::int64_t>(s);
    }
    for (auto& b : out) {
      if (b.stride == 1) b.first = b.begin, b.size = b.end - b.begin;
    }
    part.blocks[static_cast<int>(level_)] = std::move(out);
    part.defined[static_cast<int>(level_)] = true;
    if (level_ == Level::BMT && strided(p)) part.bmt_strided = true;
    return {};
  }

 private:
  // Threads whose entries are not contiguous: they cannot be padded afterwards.
  bool strided(const nlohmann::json& p) const {
    if (cut_ == Cut::Nnz) return p.at("interleave").get<bool>();
    return cut_ == Cut::Row && iparam(p, "lanes") > 1 && p.at("interleave").get<bool>();
  }

  // The blocks a cut makes, about (exact for lanes), to reserve; 0 when not known.
  std::size_t expected_blocks(const Part& part, const nlohmann::json& p, std::size_t spans) const {
    const auto rows = static_cast<std::size_t>(part.rows());
    if (cut_ == Cut::Row) {
      const auto lanes = static_cast<std::size_t>(p.contains("lanes") ? iparam(p, "lanes") : 1);
      if (lanes > 1) return rows * lanes;
      if (iparam(p, "max_nnz") > 0) return 0;
      return std::min(rows, rows / static_cast<std::size_t>(iparam(p, "rows")) + spans);
    }
    if (cut_ == Cut::Nnz)
      return part.nz.size() / static_cast<std::size_t>(iparam(p, "nnz")) + spans;
    return 0;
  }

  // A row of entries [k, e) shared by `lanes` threads: strided (lane j: j, j+lanes, ...) so that
  // a round's lanes read consecutive entries, or in runs that BMT_PAD can pad and interleave.
  static void cut_lanes(std::int64_t r, std::int64_t k, std::int64_t e, std::int64_t lanes,
                        bool interleave, std::vector<Block>& out) {
    const std::int64_t len = e - k, run = (len + lanes - 1) / lanes;
    for (std::int64_t j = 0; j < lanes; ++j) {
      Block b;
      if (interleave) {
        b.size = len > j ? (len - j + lanes - 1) / lanes : 0;
        b.first = b.begin = std::min(k + j, e);
        b.stride = lanes;
        b.end = b.size > 0 ? b.first + (b.size - 1) * lanes + 1 : b.first;
      } else {
        b.begin = k + std::min(len, j * run);
        b.end = k + std::min(len, (j + 1) * run);
      }
      cover_row(b, r);
      out.push_back(b);
    }
  }

  // Entries [b, e) of the span, walked row by row (the stream is sorted by row here).
  static void cut_rows(const Part& part, const Span& sp, const nlohmann::json& p,
                       std::vector<Block>& out) {
    if (sp.row_lo < 0) return;
    const std::int64_t per = iparam(p, "rows"), max_nnz = iparam(p, "max_nnz");
    const std::int64_t max_rows = p.contains("max_rows") ? iparam(p, "max_rows") : 0;
    const std::int64_t lanes = p.contains("lanes") ? iparam(p, "lanes") : 1;
    std::int64_t k = sp.begin;
    if (lanes > 1) {
      for (std::int64_t r = sp.row_lo; r <= sp.row_hi; ++r) {
        std::int64_t e = k;
        while (e < sp.end && part.nz[e].row == r) ++e;
        cut_lanes(r, k, e, lanes, p.at("interleave").get<bool>(), out);
        k = e;
      }
      return;
    }
    Block cur;
    bool open = false;
    std::int64_t rows_in = 0;
    for (std::int64_t r = sp.row_lo; r <= sp.row_hi; ++r) {
      std::int64_t e = k;
      while (e < sp.end && part.nz[e].row == r) ++e;
      const std::int64_t len = e - k;
      const bool full = open && (max_nnz > 0 ? (cur.end - cur.begin) + len > max_nnz ||
                                                   (max_rows > 0 && rows_in >= max_rows)
                                             : rows_in >= per);
      if (full) {
        out.push_back(cur);
        open = false;
      }
      if (!open) {
        cur = Block{};
        cur.begin = cur.end = k;
        open = true;
        rows_in = 0;
      }
      cur.end = e;
      cover_row(cur, r);
      ++rows_in;
      k = e;
    }
    if (open) out.push_back(cur);
  }

  static void cut_cols(const Part& part, const Span& sp, const nlohmann::json& p,
                       std::vector<Block>& out) {
    const std::int64_t w = iparam(p, "cols");
    for (std::int64_t k = sp.begin; k < sp.end;) {
      Block b;
      b.begin = k;
      const std::int64_t row = part.nz[k].row, tile = part.nz[k].col / w;
      while (k < sp.end && part.nz[k].row == row && part.nz[k].col / w == tile) ++k;
      b.end = k;
      cover_row(b, row);
      out.push_back(b);
    }
  }

  void cut_nnz(const Part& part, const Span& sp, const nlohmann::json& p,
               std::vector<Block>& out) const {
    const std::int64_t per = iparam(p, "nnz"), n = sp.end - sp.begin;
    if (n <= 0) return;
    if (level_ == Level::BMT && p.at("interleave").get<bool>()) {
      const std::int64_t t = (n + per - 1) / per;
      for (std::int64_t j = 0; j < t; ++j) {
        Block b;
        b.first = sp.begin + j;
        b.stride = t;
        b.size = (n - j + t - 1) / t;
        b.begin = b.first;
        b.end = b.first + (b.size - 1) * t + 1;
        for (std::int64_t k = 0; k < b.size; ++k) cover_row(b, part.nz[b.first + k * t].row);
        out.push_back(b);
      }
      return;
    }
    const bool count_rows = p.at("count_rows").get<bool>();
    Block cur;
    cur.begin = cur.end = sp.begin;
    std::int64_t cost = 0;
    for (std::int64_t k = sp.begin; k < sp.end; ++k) {
      if (count_rows && k > cur.begin) cost += part.nz[k].row - part.nz[k - 1].row;
      if (cost + 1 > per && k > cur.begin) {
        out.push_back(cur);
        cur = Block{};
        cur.begin = cur.end = k;
        cost = 0;
      }
      cur.end = k + 1;
      cover_row(cur, part.nz[k].row);
      ++cost;
    }
    out.push_back(cur);
  }

  Level level_;
  Cut cut_;
  std::string name_;
};

}  // namespace

const Operator* make_block(Level level, int cut) {
  static std::vector<std::unique_ptr<BlockOp>> all;
  all.push_back(std::make_unique<BlockOp>(level, static_cast<Cut>(cut)));
  return all.back().get();
}

}  // namespace sparsetune::graph
