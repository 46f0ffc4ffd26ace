#pragma once
// Helpers shared by operator files: stage rules common to a whole stage, and parameter access.
#include <string>
#include <vector>

#include "graph/operator.hpp"

namespace sparsetune::graph {

// Converting operators come before COMPRESS.
inline std::string converting_rule(const GraphState& s) {
  return s.compressed ? "converting operators come before COMPRESS" : "";
}

// Mapping operators come after COMPRESS and before any implementing operator.
inline std::string mapping_rule(const GraphState& s) {
  if (!s.compressed) return "mapping operators follow COMPRESS";
  if (!s.reductions.empty()) return "mapping operators come before implementing operators";
  return "";
}

inline std::int64_t iparam(const nlohmann::json& p, const char* k) {
  return p.at(k).get<std::int64_t>();
}
inline bool bparam(const nlohmann::json& p, const char* k) { return p.at(k).get<bool>(); }
inline double nparam(const nlohmann::json& p, const char* k) { return p.at(k).get<double>(); }

// Puts local rows order[0], order[1], ... at rows lo, lo + 1, ... (a permutation of those rows);
// each row keeps its origin row, so kernels still write y where the matrix says.
inline void reorder_rows(Part& p, std::int64_t lo, const std::vector<std::int64_t>& order) {
  std::vector<std::vector<std::pair<std::int64_t, double>>> rows(order.size());
  std::vector<std::int64_t> origin(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    rows[i] = std::move(p.row_entries[order[i]]);
    origin[i] = p.origin_row[order[i]];
  }
  for (std::size_t i = 0; i < order.size(); ++i) {
    p.row_entries[lo + i] = std::move(rows[i]);
    p.origin_row[lo + i] = origin[i];
  }
}

// A part that keeps the matrix-level description of `p` but none of its rows.
inline Part empty_like(const Part& p, const std::string& suffix) {
  Part q;
  q.path = p.path.empty() ? suffix : p.path + "." + suffix;
  q.cols = p.cols;
  q.max_stored = p.max_stored;
  q.slices = p.slices;
  return q;
}

// Throws DesignError when `stored` entries exceed the part's padding budget.
inline void check_stored(const Part& p, std::int64_t stored, const char* op) {
  if (stored > p.max_stored)
    throw DesignError(std::string(op) + ": rule: padding would store " + std::to_string(stored) +
                      " entries" + (p.path.empty() ? "" : " in part " + p.path) + ", more than " +
                      std::to_string(p.max_stored) + " (DesignOptions::max_padding)");
}

}  // namespace sparsetune::graph
