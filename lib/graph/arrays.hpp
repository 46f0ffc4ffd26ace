#pragma once
// The named metadata arrays a format can hold. A kernel reads only those its fragments name.
#include <cstdint>
#include <optional>
#include <string>

namespace sparsetune::graph {

enum class Arr {
  bmtb_first_bmw,  // [n_bmtb + 1] first warp block of each thread block
  bmw_first_bmt,   // [n_bmw + 1] first thread block of each warp block
  bmt_first_nz,    // [n_bmt] storage position of the thread block's first entry
  bmt_stride,      // [n_bmt] distance between its consecutive entries
  bmt_size,        // [n_bmt] entries it holds
  bmt_row,         // [n_bmt] its first local row
  bmw_row,         // [n_bmw] first local row of each warp block
  bmtb_row,        // [n_bmtb] first local row of each thread block
  bmtb_rows,       // [n_bmtb] local rows a thread block spans
  nz_col,          // [nnz] column of each stored entry
  nz_row_delta,    // [nnz] row step from the previous entry of the same thread block
  origin_row,      // [rows] matrix row of each local row
  nz_val,          // [nnz] values (floating point)
  bmw_first_nz,    // [n_bmw + 1] first entry of each warp block (implied threads)
  bmtb_first_nz,   // [n_bmtb + 1] first entry of each thread block (implied threads)
  // TC_COMPRESS's dense unfolding (MatXtract §4.2.1): a warp block is a chunk of TC blocks.
  bmw_first_tc,  // [n_bmw + 1] first TC block of each warp block (ChunkPtr)
  tc_bit,        // [n_tc * tc_w / 4] bitmap of each TC block, bit r*w + c, in 32-bit words
  tc_col,        // [n_tc * tc_w] column of each TC block column (TCCol)
  tc_ptr,        // [n_tc + 1] first value of each TC block (TCPtr)
  // Bits 16-23 of nz_col's stored words when they are 24 bits wide (graph::split_col_words):
  // nz_col then stores the low 16 bits, 3 bytes an entry instead of 4.
  nz_col_hi,  // [nnz]
};
constexpr int kArrays = 20;

const char* arr_name(Arr a);
std::optional<Arr> arr_from_name(const std::string& name);

}  // namespace sparsetune::graph
