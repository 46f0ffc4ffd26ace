// Block-level reductions in shared memory: SHMEM_TOTAL_RED (the BMTB holds one row: a block-wide
// sum) and SHMEM_OFFSET_RED (one shared accumulator per row of the BMTB, addressed by the row's
// offset from the BMTB's first row; written out once the BMTB is done).
#include <algorithm>
#include <vector>

#include "graph/op_util.hpp"

namespace sparsetune::graph {

namespace {

class ShmemTotalModel final : public ReductionModel {
 public:
  void begin_bmtb(const FormatReader&, const Cursor& c) override { acc_.assign(c.threads, 0.0); }
  void accept(const FormatReader&, const Cursor&, int tid, std::int64_t, double v,
              const Emit&) override {
    acc_[tid] += v;
  }
  void end_bmtb(const FormatReader& f, const Cursor& c, const Emit& out) override {
    double s = 0.0;
    for (int w = 0; w < c.threads / 32; ++w) {
      std::array<double, 32> a{};
      for (int l = 0; l < 32; ++l) a[l] = acc_[w * 32 + l];
      for (int off = 16; off > 0; off /= 2) {
        std::array<double, 32> next{};
        for (int l = 0; l < 32; ++l) next[l] = a[l] + a[l ^ off];
        a = next;
      }
      s += a[0];
    }
    out(0, f.at(Arr::bmtb_row, c.bmtb), s);
  }

 private:
  std::vector<double> acc_;
};

class ShmemOffsetModel final : public ReductionModel {
 public:
  void begin_bmtb(const FormatReader& f, const Cursor& c) override {
    row0_ = f.at(Arr::bmtb_row, c.bmtb);
    rows_.assign(static_cast<std::size_t>(std::max<std::int64_t>(f.at(Arr::bmtb_rows, c.bmtb), 0)),
                 0.0);
  }
  void accept(const FormatReader&, const Cursor&, int, std::int64_t row, double v,
              const Emit&) override {
    if (row < 0) return;
    const std::int64_t i = row - row0_;
    if (i < 0 || i >= static_cast<std::int64_t>(rows_.size()))
      throw Error("format: a result for local row " + std::to_string(row) +
                  " falls outside its BMTB's rows");
    rows_[i] += v;
  }
  void end_bmtb(const FormatReader&, const Cursor& c, const Emit& out) override {
    for (std::size_t i = 0; i < rows_.size(); ++i)
      out(static_cast<int>(i % c.threads), row0_ + static_cast<std::int64_t>(i), rows_[i]);
  }

 private:
  std::int64_t row0_ = 0;
  std::vector<double> rows_;
};

class ShmemTotalRed final : public ReductionOperator {
 public:
  const char* name() const override { return "SHMEM_TOTAL_RED"; }
  const char* summary() const override {
    return "The thread block adds all results into one (its BMTB holds one row)";
  }
  RedLevel level() const override { return RedLevel::Block; }
  std::vector<Arr> reads() const override { return {Arr::bmtb_row}; }
  const char* fragment() const override { return "shmem_total_red"; }
  std::unique_ptr<ReductionModel> model() const override {
    return std::make_unique<ShmemTotalModel>();
  }
  void check(const Part& part) const override { require_one_row(part, Level::BMTB, name()); }
};

class ShmemOffsetRed final : public ReductionOperator {
 public:
  const char* name() const override { return "SHMEM_OFFSET_RED"; }
  const char* summary() const override {
    return "Results gather in shared memory at their row's offset in the BMTB, then go out";
  }
  std::vector<ParamSpec> params() const override {
    return {{"max_rows", ParamType::Int, 4096, 1, 4096, "most rows one BMTB may span"}};
  }
  RedLevel level() const override { return RedLevel::Block; }
  bool takes_any_row_order() const override { return true; }
  std::vector<Arr> reads() const override { return {Arr::bmtb_row, Arr::bmtb_rows}; }
  const char* fragment() const override { return "shmem_offset_red"; }
  std::unique_ptr<ReductionModel> model() const override {
    return std::make_unique<ShmemOffsetModel>();
  }
  std::vector<Part> apply(Part& part, const nlohmann::json& p) const override {
    part.shmem_rows_limit = iparam(p, "max_rows");
    return ReductionOperator::apply(part, p);
  }
  void check(const Part& part) const override {
    const auto& b = part.blocks[0];
    for (std::size_t i = 0; i < b.size(); ++i)
      if (b[i].row_lo >= 0 && b[i].row_hi - b[i].row_lo + 1 > part.shmem_rows_limit)
        throw DesignError(std::string(name()) + ": rule: a BMTB may span at most max_rows = " +
                          std::to_string(part.shmem_rows_limit) + " rows, but BMTB " +
                          std::to_string(i) + " spans " +
                          std::to_string(b[i].row_hi - b[i].row_lo + 1));
  }
};

class GmemAtomRed final : public ReductionOperator {
 public:
  const char* name() const override { return "GMEM_ATOM_RED"; }
  const char* summary() const override {
    return "Results are added to y with atomics (without it each row must be written once)";
  }
  RedLevel level() const override { return RedLevel::Global; }
  bool takes_any_row_order() const override { return true; }
  std::vector<Arr> reads() const override { return {Arr::origin_row}; }
  const char* fragment() const override { return "gmem_atom_red"; }
  std::unique_ptr<ReductionModel> model() const override { return nullptr; }
};

}  // namespace

const Operator* make_shmem_total_red() {
  static ShmemTotalRed op;
  return &op;
}
const Operator* make_shmem_offset_red() {
  static ShmemOffsetRed op;
  return &op;
}
const Operator* make_gmem_atom_red() {
  static GmemAtomRed op;
  return &op;
}

}  // namespace sparsetune::graph
