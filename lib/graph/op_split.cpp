// Splits past AlphaSparse's operator set: HYB_SPLIT (a regular ELL-like part plus the row tails
// beyond a width), DIAG_SPLIT (dense diagonals) and DENSE_SPLIT (dense square tiles). Each makes
// two parts, the regular one first; the extracted parts store explicit zeros so that their
// index arrays become formulas the Optimizer can compute.
#include <algorithm>
#include <map>

#include "graph/op_util.hpp"

namespace sparsetune::graph {

namespace {

using RowEntries = std::vector<std::pair<std::int64_t, double>>;

// Value at column c of a sorted row, and whether it is stored.
std::pair<bool, double> lookup(const RowEntries& row, std::int64_t c) {
  auto it = std::lower_bound(row.begin(), row.end(), c,
                             [](const auto& e, std::int64_t x) { return e.first < x; });
  if (it != row.end() && it->first == c) return {true, it->second};
  return {false, 0.0};
}

// Moves every entry of `part` into `regular` (all rows, zero-filled where `wanted` says) or
// `rest` (rows that keep entries). A wanted column outside the matrix becomes an explicit zero
// at the nearest column inside it, so that every row keeps one slot per wanted column.
template <class Wanted>
void split_rows(Part& part, Part& regular, Part& rest, Wanted wanted) {
  regular.origin_row = part.origin_row;
  regular.row_entries.resize(part.rows());
  for (std::int64_t r = 0; r < part.rows(); ++r) {
    const auto& row = part.row_entries[r];
    const std::vector<std::int64_t> cols = wanted(r);  // ascending
    RowEntries left;
    for (auto c : cols) {
      if (c < 0 || c >= part.cols)
        regular.row_entries[r].push_back({std::clamp<std::int64_t>(c, 0, part.cols - 1), 0.0});
      else
        regular.row_entries[r].push_back({c, lookup(row, c).second});
    }
    for (const auto& e : row)
      if (!std::binary_search(cols.begin(), cols.end(), e.first)) left.push_back(e);
    regular.pad_entries +=
        static_cast<std::int64_t>(cols.size()) -
        (static_cast<std::int64_t>(row.size()) - static_cast<std::int64_t>(left.size()));
    if (!left.empty()) {
      rest.origin_row.push_back(part.origin_row[r]);
      rest.row_entries.push_back(std::move(left));
    }
  }
}

// (diagonal, entries on it) for every diagonal col - row that holds an entry, ascending.
std::vector<std::pair<std::int64_t, std::int64_t>> diagonal_counts(const Part& part) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  std::int64_t entries = 0, top = 0;
  for (std::int64_t r = 0; r < part.rows(); ++r) {
    entries += static_cast<std::int64_t>(part.row_entries[r].size());
    top = std::max(top, part.origin_row[r]);
  }
  const std::int64_t span = top + part.cols;  // diagonals -top .. cols - 1
  if (span <= 2 * entries + (std::int64_t{1} << 20)) {
    // A counter per diagonal: one pass, no tree.
    std::vector<std::int64_t> n(static_cast<std::size_t>(span), 0);
    for (std::int64_t r = 0; r < part.rows(); ++r)
      for (const auto& e : part.row_entries[r]) ++n[e.first - part.origin_row[r] + top];
    for (std::int64_t i = 0; i < span; ++i)
      if (n[i] > 0) out.push_back({i - top, n[i]});
    return out;
  }
  std::map<std::int64_t, std::int64_t> count;
  for (std::int64_t r = 0; r < part.rows(); ++r)
    for (const auto& e : part.row_entries[r]) ++count[e.first - part.origin_row[r]];
  out.assign(count.begin(), count.end());
  return out;
}

}  // namespace

class HybSplit final : public Operator {
 public:
  const char* name() const override { return "HYB_SPLIT"; }
  Stage stage() const override { return Stage::Converting; }
  const char* summary() const override {
    return "Part 0: the first `width` non-zeros of every row; part 1: the longer rows' tails";
  }
  std::vector<ParamSpec> params() const override {
    return {{"width", ParamType::Int, 8, 1, 1 << 30, "row-length threshold of the regular part"}};
  }
  std::string precondition(const GraphState& s, const nlohmann::json&) const override {
    return converting_rule(s);
  }
  void advance(GraphState&, const nlohmann::json&) const override {}
  int branches(const nlohmann::json&) const override { return 2; }
  bool reads_rows_in_place() const override { return true; }
  std::vector<Part> apply(Part& part, const nlohmann::json& p) const override {
    const auto w = static_cast<std::size_t>(iparam(p, "width"));
    Part head = empty_like(part, "0"), tail = empty_like(part, "1");
    head.origin_row = part.origin_row;
    if (part.in) {  // rows in the matrix: the head and the tail are ranges of them
      head.in = tail.in = part.in;
      head.in_lo = part.in_lo;
      head.in_hi.resize(part.rows());
      for (std::int64_t r = 0; r < part.rows(); ++r) {
        const std::int64_t lo = part.in_lo[r], hi = part.in_hi[r];
        const std::int64_t k = std::min(static_cast<std::int64_t>(w), hi - lo);
        head.in_hi[r] = lo + k;
        if (hi - lo > k) {
          tail.origin_row.push_back(part.origin_row[r]);
          tail.in_lo.push_back(lo + k);
          tail.in_hi.push_back(hi);
        }
      }
    }
    if (!part.in) head.row_entries.resize(part.rows());
    for (std::int64_t r = 0; !part.in && r < part.rows(); ++r) {
      auto& row = part.row_entries[r];
      const std::size_t k = std::min(w, row.size());
      head.row_entries[r].assign(row.begin(), row.begin() + k);
      if (row.size() > k) {
        tail.origin_row.push_back(part.origin_row[r]);
        tail.row_entries.emplace_back(row.begin() + k, row.end());
      }
    }
    std::vector<Part> out;
    out.push_back(std::move(head));
    out.push_back(std::move(tail));
    return out;
  }
};

class DiagSplit final : public Operator {
 public:
  const char* name() const override { return "DIAG_SPLIT"; }
  Stage stage() const override { return Stage::Converting; }
  const char* summary() const override {
    return "Part 0: the diagonals filled to at least `min_fill`, stored zero-filled; part 1: the "
           "rest";
  }
  std::vector<ParamSpec> params() const override {
    return {
        {"min_fill", ParamType::Number, 0.6, 0.01, 1.0, "fraction of a diagonal that is stored"},
        {"max_diagonals", ParamType::Int, 32, 1, 1024, "most diagonals extracted"}};
  }
  std::string precondition(const GraphState& s, const nlohmann::json&) const override {
    return converting_rule(s);
  }
  void advance(GraphState&, const nlohmann::json&) const override {}
  int branches(const nlohmann::json&) const override { return 2; }
  std::vector<Part> apply(Part& part, const nlohmann::json& p) const override {
    const auto count = diagonal_counts(part);
    std::vector<std::pair<std::int64_t, std::int64_t>> by_count = count;
    std::stable_sort(by_count.begin(), by_count.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    if (by_count.size() > static_cast<std::size_t>(iparam(p, "max_diagonals")))
      by_count.resize(iparam(p, "max_diagonals"));
    std::vector<std::int64_t> diags;
    for (const auto& [d, n] : by_count) {
      std::int64_t len = 0;
      for (auto g : part.origin_row) len += (g + d >= 0 && g + d < part.cols);
      if (len > 0 && static_cast<double>(n) >= nparam(p, "min_fill") * static_cast<double>(len))
        diags.push_back(d);
    }
    std::sort(diags.begin(), diags.end());
    std::int64_t slots = 0, entries = 0;
    for (const auto& [d, n] : count) entries += n;
    for (auto d : diags)
      for (auto g : part.origin_row) slots += (g + d >= 0 && g + d < part.cols);
    // Every row gets a slot per diagonal (explicit zeros where the diagonal leaves the matrix)
    // when that costs at most a quarter more: slot k of every row is then diagonal k, so the
    // column array is a formula (row + offset of k) that the Optimizer computes, not stores.
    const std::int64_t full = part.rows() * static_cast<std::int64_t>(diags.size());
    const bool every_slot = part.cols > 0 && 4 * full <= 5 * slots;
    check_stored(part, entries + (every_slot ? full : slots), name());  // every entry + slot
    Part dense = empty_like(part, "0"), rest = empty_like(part, "1");
    split_rows(part, dense, rest, [&](std::int64_t r) {
      std::vector<std::int64_t> cols;
      for (auto d : diags)
        if (every_slot || (part.origin_row[r] + d >= 0 && part.origin_row[r] + d < part.cols))
          cols.push_back(part.origin_row[r] + d);
      return cols;
    });
    std::vector<Part> out;
    out.push_back(std::move(dense));
    out.push_back(std::move(rest));
    return out;
  }
};

class DenseSplit final : public Operator {
 public:
  const char* name() const override { return "DENSE_SPLIT"; }
  Stage stage() const override { return Stage::Converting; }
  const char* summary() const override {
    return "Part 0: square tiles filled to at least `min_fill`, stored whole; part 1: the rest";
  }
  std::vector<ParamSpec> params() const override {
    return {{"block", ParamType::Int, 4, 2, 64, "tile edge"},
            {"min_fill", ParamType::Number, 0.5, 0.01, 1.0, "fraction of a tile that is stored"}};
  }
  std::string precondition(const GraphState& s, const nlohmann::json&) const override {
    return converting_rule(s);
  }
  void advance(GraphState&, const nlohmann::json&) const override {}
  int branches(const nlohmann::json&) const override { return 2; }
  std::vector<Part> apply(Part& part, const nlohmann::json& p) const override {
    const std::int64_t b = iparam(p, "block");
    std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> count;
    for (std::int64_t r = 0; r < part.rows(); ++r)
      for (const auto& e : part.row_entries[r]) ++count[{part.origin_row[r] / b, e.first / b}];
    // Tile rows may be only partly inside this part; the fill is measured on the whole tile.
    std::map<std::int64_t, std::vector<std::int64_t>> tiles;  // tile row -> tile columns
    for (const auto& [t, n] : count) {
      const std::int64_t w = std::min(b, part.cols - t.second * b);
      if (static_cast<double>(n) >= nparam(p, "min_fill") * static_cast<double>(b * w))
        tiles[t.first].push_back(t.second);
    }
    std::int64_t slots = 0, entries = 0;
    for (const auto& [t, n] : count) entries += n;
    for (std::int64_t r = 0; r < part.rows(); ++r)
      if (auto it = tiles.find(part.origin_row[r] / b); it != tiles.end())
        slots += b * static_cast<std::int64_t>(it->second.size());
    check_stored(part, entries + slots, name());  // upper bound: every entry plus every slot
    Part dense = empty_like(part, "0"), rest = empty_like(part, "1");
    split_rows(part, dense, rest, [&](std::int64_t r) {
      std::vector<std::int64_t> cols;
      auto it = tiles.find(part.origin_row[r] / b);
      if (it == tiles.end()) return cols;
      for (auto tc : it->second)
        for (std::int64_t c = tc * b; c < std::min((tc + 1) * b, part.cols); ++c) cols.push_back(c);
      return cols;
    });
    std::vector<Part> out;
    out.push_back(std::move(dense));
    out.push_back(std::move(rest));
    return out;
  }
};

const Operator* make_hyb_split() {
  static HybSplit op;
  return &op;
}
const Operator* make_diag_split() {
  static DiagSplit op;
  return &op;
}
const Operator* make_dense_split() {
  static DenseSplit op;
  return &op;
}

}  // namespace sparsetune::graph
