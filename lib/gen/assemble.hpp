#pragma once
// Building blocks shared by the generators: a row-by-row CSR writer, assembly of an unordered
// edge list into a CSR, and mirroring of an upper triangle into a symmetric matrix.
#include <cstdint>
#include <vector>

#include "core/matrix.hpp"

namespace sparsetune::gen {

// Appends entries row by row; the caller adds columns in ascending order within a row.
class RowWriter {
 public:
  RowWriter(std::int64_t rows, std::int64_t cols, std::int64_t expected_nnz = 0);
  void add(std::int64_t col, double val) {
    m_.col_idx.push_back(col);
    m_.val.push_back(val);
  }
  void end_row() { m_.row_ptr.push_back(static_cast<std::int64_t>(m_.col_idx.size())); }
  Csr64 finish();  // throws unless every row has been ended

 private:
  Csr64 m_;
};

// Edge list -> CSR with columns sorted per row. Of entries with equal coordinates the first in
// list order is kept and the later ones dropped (values are not summed, so they keep the range
// they were drawn from). Returns the CSR; `dropped`, when given, receives how many were dropped.
Csr64 assemble_keep_first(std::int64_t rows, std::int64_t cols,
                          const std::vector<std::int64_t>& row,
                          const std::vector<std::int64_t>& col, const std::vector<double>& val,
                          std::int64_t* dropped = nullptr);

// U + U^T for a square matrix holding only its upper triangle (diagonal included, kept once).
Csr64 mirror_upper(const Csr64& upper);

// Throws when a generator would produce more than 2^33 entries, or when its peak memory
// (bytes_per_entry per expected entry plus 16 bytes per row) exceeds this machine's physical
// memory: a clear error instead of the system killing the process half-way.
void check_entry_budget(double expected_nnz, const char* kind, double rows = 0,
                        double bytes_per_entry = 16);

}  // namespace sparsetune::gen
