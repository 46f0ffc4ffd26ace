#pragma once
// Helpers shared by operator files: stage rules common to a whole stage, and parameter access.
#include <string>

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

// A part that keeps the matrix-level description of `p` but none of its rows.
inline Part empty_like(const Part& p, const std::string& suffix) {
  Part q;
  q.path = p.path.empty() ? suffix : p.path + "." + suffix;
  q.cols = p.cols;
  return q;
}

}  // namespace sparsetune::graph
