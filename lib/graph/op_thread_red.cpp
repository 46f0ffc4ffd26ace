// THREAD_TOTAL_RED and THREAD_BITMAP_RED: how one thread reduces the products of its entries.
#include "graph/op_util.hpp"

namespace sparsetune::graph {

namespace {

// The thread level's common part. `loads`: entries a thread loads together before it sums them.
// Their loads (value, column, x at the column, the row step) then wait on memory side by side
// rather than one after another; the sums keep the entries' order, so y is the same bit for bit.
class ThreadReduction : public ReductionOperator {
 public:
  RedLevel level() const override { return RedLevel::Thread; }
  bool takes_any_row_order() const override { return true; }
  std::vector<ParamSpec> params() const override {
    return {{"loads", ParamType::Int, 1, 1, 8,
             "entries a thread loads together before summing them (1: one after another)", true}};
  }
  std::string precondition(const GraphState& s, const nlohmann::json& p) const override {
    if (auto e = ReductionOperator::precondition(s, p); !e.empty()) return e;
    if (!p.contains("loads") || iparam(p, "loads") == 1) return "";
    if (s.op == "spmm") return "loads > 1 serves SpMV and SpTV (SpMM's tiles load B by COL_TILE)";
    if (s.col_lanes > 1)
      return "loads > 1 walks a thread's own entries, not COL_TILE's lane groups";
    return "";
  }
  std::vector<Part> apply(Part& part, const nlohmann::json& p) const override {
    part.thread_loads = p.contains("loads") ? static_cast<int>(iparam(p, "loads")) : 1;
    return ReductionOperator::apply(part, p);
  }
};

// All entries of the thread belong to one row: one sum.
class ThreadTotalModel final : public ReductionModel {
 public:
  Pair thread(const FormatReader& f, const Cursor& c, const Emit&) override {
    if (!c.t_active) return {};
    Pair out{f.at(Arr::bmt_row, c.bmt), 0.0};
    const auto first = f.at(Arr::bmt_first_nz, c.bmt), stride = f.at(Arr::bmt_stride, c.bmt);
    const auto size = f.at(Arr::bmt_size, c.bmt);
    for (std::int64_t k = 0; k < size; ++k) {
      const auto nz = first + k * stride;
      const double v = f.val(nz), p = v * f.x(f.at(Arr::nz_col, nz));
      out.v += v != 0.0 ? p : 0.0;  // a stored zero adds nothing (ST_MAC)
    }
    return out;
  }
};

// A running sum per row: when the row changes (nz_row_delta != 0) the finished sum is flushed.
class ThreadBitmapModel final : public ReductionModel {
 public:
  Pair thread(const FormatReader& f, const Cursor& c, const Emit& side) override {
    if (!c.t_active) return {};
    Pair out{f.at(Arr::bmt_row, c.bmt), 0.0};
    const auto first = f.at(Arr::bmt_first_nz, c.bmt), stride = f.at(Arr::bmt_stride, c.bmt);
    const auto size = f.at(Arr::bmt_size, c.bmt);
    const int tid = c.warp * 32 + c.lane;
    for (std::int64_t k = 0; k < size; ++k) {
      const auto nz = first + k * stride;
      const auto d = f.at(Arr::nz_row_delta, nz);
      if (d != 0) {
        side(tid, out.row, out.v);
        out.row += d;
        out.v = 0.0;
      }
      const double v = f.val(nz), p = v * f.x(f.at(Arr::nz_col, nz));
      out.v += v != 0.0 ? p : 0.0;  // a stored zero adds nothing (ST_MAC)
    }
    return out;
  }
};

class ThreadTotalRed final : public ThreadReduction {
 public:
  const char* name() const override { return "THREAD_TOTAL_RED"; }
  const char* summary() const override {
    return "Each thread sums its entries into one result (its entries share a row)";
  }
  std::vector<Arr> reads() const override {
    return {Arr::bmt_first_nz, Arr::bmt_stride, Arr::bmt_size,
            Arr::bmt_row,      Arr::nz_col,     Arr::nz_val};
  }
  const char* fragment() const override { return "thread_total_red"; }
  std::unique_ptr<ReductionModel> model() const override {
    return std::make_unique<ThreadTotalModel>();
  }
  void check(const Part& part) const override { require_one_row(part, Level::BMT, name()); }
};

class ThreadBitmapRed final : public ThreadReduction {
 public:
  const char* name() const override { return "THREAD_BITMAP_RED"; }
  const char* summary() const override {
    return "Each thread sums its entries row by row, marking row changes per entry; finished rows "
           "are flushed to the next non-collective level";
  }
  std::vector<Arr> reads() const override {
    return {Arr::bmt_first_nz, Arr::bmt_stride, Arr::bmt_size,    Arr::bmt_row,
            Arr::nz_col,       Arr::nz_val,     Arr::nz_row_delta};
  }
  const char* fragment() const override { return "thread_bitmap_red"; }
  std::unique_ptr<ReductionModel> model() const override {
    return std::make_unique<ThreadBitmapModel>();
  }
};

}  // namespace

const Operator* make_thread_total_red() {
  static ThreadTotalRed op;
  return &op;
}
const Operator* make_thread_bitmap_red() {
  static ThreadBitmapRed op;
  return &op;
}

}  // namespace sparsetune::graph
