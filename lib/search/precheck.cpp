#include "search/precheck.hpp"

#include <algorithm>
#include <array>
#include <numeric>

namespace sparsetune::search {

namespace {

enum class Rows { One, Many, Unknown };  // rows held by each block of a level
const std::array<const char*, 3> kLevel = {"BMTB", "BMW", "BMT"};  // coarse to fine

bool starts(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// The operators that apply to one part: its ancestors' operators before the dividing one, then
// its own list.
struct Chain {
  const MatrixShape* m = nullptr;
  std::vector<const graph::OpNode*> ops;
  bool divided = false;  // under a dividing operator: the part may not hold the longest row

  // The last blocking operator of a level ("" when the level is implied), and its rows.
  const graph::OpNode* block(int level) const {
    const graph::OpNode* b = nullptr;
    for (const auto* n : ops)
      if (starts(n->op, std::string(kLevel[level]) + "_") && n->op.ends_with("_BLOCK")) b = n;
    return b;
  }

  // Whether each block of `level` holds one row, several, or it depends on the data. Implied
  // levels: threads and warps split their parent (so hold what it holds), warps made of 32
  // explicit threads and thread blocks made of warps group several.
  Rows rows_at(int level) const {
    const graph::OpNode* b = block(level);
    if (b) {
      const Rows parent = level > 0 ? rows_at(level - 1) : Rows::Many;
      if (b->op.ends_with("_NNZ_BLOCK")) {
        // Chunks of k entries cut from blocks of several rows straddle a row boundary as soon
        // as some row length is not a multiple of k.
        const auto k = b->params.value("nnz", std::int64_t{1});
        if (parent == Rows::One) return Rows::One;
        return parent == Rows::Many && k > 1 && m->row_len_gcd % k != 0 ? Rows::Many
                                                                        : Rows::Unknown;
      }
      if (!b->op.ends_with("_ROW_BLOCK")) return Rows::Unknown;
      const auto r = b->params.value("rows", std::int64_t{1});
      if (r == 1) return Rows::One;
      return parent == Rows::One ? Rows::One : Rows::Many;
    }
    for (int finer = level + 1; finer < 3; ++finer)
      if (const graph::OpNode* f = block(finer)) {
        if (level > 0 && rows_at(level - 1) == Rows::One) return Rows::One;
        return f->op.ends_with("_ROW_BLOCK") ? Rows::Many : Rows::Unknown;
      }
    return level > 0 ? rows_at(level - 1) : Rows::Many;
  }
};

// The reductions that need one row per block of a level (graph/operator.cpp require_one_row).
int one_row_level(const std::string& op) {
  if (op == "SHMEM_TOTAL_RED") return 0;
  if (op == "WARP_TOTAL_RED") return 1;
  if (op == "THREAD_TOTAL_RED") return 2;
  return -1;
}

std::string check(const std::vector<graph::OpNode>& list, Chain chain, const MatrixShape& m) {
  for (const auto& n : list) {
    if (!n.branches.empty()) {
      Chain sub = chain;
      sub.divided = true;
      for (const auto& b : n.branches)
        if (auto why = check(b, sub, m); !why.empty()) return why;
      return "";
    }
    chain.ops.push_back(&n);
  }
  // Several non-empty rows per block are certain only when most rows hold entries.
  const bool rows_filled = m.rows >= 2 && 2 * m.empty_rows < m.rows;
  for (const auto* n : chain.ops) {
    const int level = one_row_level(n->op);
    if (level < 0 || !rows_filled) continue;
    if (chain.rows_at(level) == Rows::Many)
      return n->op + " needs one row per " + kLevel[level] + ", but each " + kLevel[level] +
             " of this graph holds several rows";
  }
  // A thread owning a whole huge row (no dividing operator before it to set such rows apart).
  const graph::OpNode* threads = chain.block(2);  // implied threads share their parent's row
  if (!chain.divided && m.max_row > kThreadRowLimit && threads && threads->op == "BMT_ROW_BLOCK" &&
      chain.rows_at(2) == Rows::One) {
    bool cut = false;  // an entry or column split of rows above the threads
    for (const auto* n : chain.ops)
      cut = cut || n->op.ends_with("_NNZ_BLOCK") || n->op.ends_with("_COL_BLOCK");
    if (!cut)
      return "threads own whole rows, and the longest row has " + std::to_string(m.max_row) +
             " entries (more than " + std::to_string(kThreadRowLimit) + ")";
  }
  return "";
}

}  // namespace

MatrixShape MatrixShape::of(const Csr64& a) {
  MatrixShape m;
  m.rows = a.rows;
  m.cols = a.cols;
  m.nnz = a.nnz();
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const std::int64_t len = a.row_ptr[r + 1] - a.row_ptr[r];
    m.max_row = std::max(m.max_row, len);
    m.empty_rows += len == 0;
    m.row_len_gcd = std::gcd(m.row_len_gcd, len);
  }
  return m;
}

std::string bound_to_fail(const graph::Graph& g, const MatrixShape& m) {
  return check(g.ops, Chain{&m, {}, false}, m);
}

}  // namespace sparsetune::search
