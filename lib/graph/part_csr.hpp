#pragma once
// A part's rows, before COMPRESS, as a CSR matrix of its local rows (the matrix's columns): the
// form the plain functions of lib/core (the crux split, the TC encodings) take.
#include "core/matrix.hpp"
#include "graph/metadata.hpp"

namespace sparsetune::graph {

inline Csr64 part_csr(const Part& part) {
  Csr64 a;
  a.rows = part.rows();
  a.cols = part.cols;
  a.row_ptr.assign(1, 0);
  for (const auto& row : part.row_entries) {
    for (const auto& [c, v] : row) a.col_idx.push_back(c), a.val.push_back(v);
    a.row_ptr.push_back(static_cast<std::int64_t>(a.val.size()));
  }
  return a;
}

}  // namespace sparsetune::graph
