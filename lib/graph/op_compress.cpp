// COMPRESS: stores only the non-zeros, row after row; the mapping stage starts here.
#include <algorithm>

#include "core/parallel_for.hpp"
#include "graph/op_util.hpp"

namespace sparsetune::graph {

class Compress final : public Operator {
 public:
  const char* name() const override { return "COMPRESS"; }
  Stage stage() const override { return Stage::Converting; }
  const char* summary() const override { return "Store only the non-zeros, row after row"; }
  std::string precondition(const GraphState& s, const nlohmann::json&) const override {
    return s.compressed ? "COMPRESS appears once per part" : "";
  }
  void advance(GraphState& s, const nlohmann::json&) const override { s.compressed = true; }
  bool reads_rows_in_place() const override { return true; }
  std::vector<Part> apply(Part& part, const nlohmann::json&) const override {
    if (part.in) {
      compress_in_place(part);
      return {};
    }
    part.nz.clear();
    std::size_t n = 0;
    for (const auto& row : part.row_entries) n += row.size();
    part.nz.reserve(n);
    for (std::int64_t r = 0; r < part.rows(); ++r)
      for (const auto& [c, v] : part.row_entries[r]) part.nz.push_back({r, c, v});
    part.row_entries.clear();
    part.row_entries.shrink_to_fit();
    part.compressed = true;
    return {};
  }

 private:
  // The rows read from the matrix, copied into the stream on every core: each range of rows
  // counts its entries, then writes them at its offset.
  static void compress_in_place(Part& part) {
    const std::int64_t rows = part.rows();
    std::int64_t n = 0;
    for (std::int64_t r = 0; r < rows; ++r) n += part.in_hi[r] - part.in_lo[r];
    const int ranges =
        static_cast<int>(std::min<std::int64_t>(threads_for(n), std::max<std::int64_t>(rows, 1)));
    const auto first_row = [&](int q) { return rows * q / ranges; };
    std::vector<std::int64_t> at(ranges + 1, 0);
    parallel_for(ranges, ranges, [&](int q) {
      for (auto r = first_row(q); r < first_row(q + 1); ++r)
        at[q + 1] += part.in_hi[r] - part.in_lo[r];
    });
    for (int q = 0; q < ranges; ++q) at[q + 1] += at[q];
    part.nz.assign(static_cast<std::size_t>(n), Entry{});
    const Csr64& a = *part.in;
    parallel_for(ranges, ranges, [&](int q) {
      auto k = at[q];
      for (auto r = first_row(q); r < first_row(q + 1); ++r)
        for (auto e = part.in_lo[r]; e < part.in_hi[r]; ++e)
          part.nz[k++] = {r, a.col_idx[e], a.val[e]};
    });
    part.in = nullptr;
    std::vector<std::int64_t>().swap(part.in_lo);
    std::vector<std::int64_t>().swap(part.in_hi);
    part.row_entries.clear();
    part.compressed = true;
  }
};

const Operator* make_compress() {
  static Compress op;
  return &op;
}

}  // namespace sparsetune::graph
