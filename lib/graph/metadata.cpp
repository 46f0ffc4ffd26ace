#include "graph/metadata.hpp"

#include <algorithm>

namespace sparsetune::graph {

const char* level_name(Level l) {
  switch (l) {
    case Level::BMTB:
      return "BMTB";
    case Level::BMW:
      return "BMW";
    case Level::BMT:
      return "BMT";
  }
  return "?";
}

int defined_parent(const Part& p, Level l) {
  for (int c = static_cast<int>(l) - 1; c >= 0; --c)
    if (p.defined[c]) return c;
  return -1;
}

std::vector<Span> parent_spans(const Part& p, Level l) {
  const int pl = defined_parent(p, l);
  std::vector<Span> out;
  if (pl < 0) {
    Span s{0, static_cast<std::int64_t>(p.nz.size()), -1, -1};
    if (p.rows() > 0) s.row_lo = 0, s.row_hi = p.rows() - 1;
    out.push_back(s);
    return out;
  }
  for (const auto& b : p.blocks[pl]) out.push_back({b.begin, b.end, b.row_lo, b.row_hi});
  return out;
}

void copy_out_rows(Part& p) {
  if (!p.in) return;
  p.row_entries.assign(p.origin_row.size(), {});
  for (std::size_t r = 0; r < p.origin_row.size(); ++r) {
    auto& row = p.row_entries[r];
    row.reserve(static_cast<std::size_t>(p.in_hi[r] - p.in_lo[r]));
    for (auto k = p.in_lo[r]; k < p.in_hi[r]; ++k) row.push_back({p.in->col_idx[k], p.in->val[k]});
  }
  p.in = nullptr;
  std::vector<std::int64_t>().swap(p.in_lo);
  std::vector<std::int64_t>().swap(p.in_hi);
}

void refresh_ranges(Part& p) {
  std::vector<int> defined;
  for (int l = 0; l < kLevels; ++l)
    if (p.defined[l]) defined.push_back(l);
  for (int k = static_cast<int>(defined.size()) - 2; k >= 0; --k) {
    auto& parents = p.blocks[defined[k]];
    const auto& children = p.blocks[defined[k + 1]];
    std::vector<bool> seen(parents.size(), false);
    for (const auto& c : children) {
      auto& b = parents[c.parent];
      if (!seen[c.parent]) b.begin = c.begin, b.end = c.end, seen[c.parent] = true;
      b.begin = std::min(b.begin, c.begin);
      b.end = std::max(b.end, c.end);
    }
    std::int64_t pos = 0;
    for (std::size_t i = 0; i < parents.size(); ++i) {
      if (!seen[i]) parents[i].begin = parents[i].end = pos;
      pos = parents[i].end;
      parents[i].first = parents[i].begin;
      parents[i].size = parents[i].end - parents[i].begin;
    }
  }
}

}  // namespace sparsetune::graph
