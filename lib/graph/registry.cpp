#include "graph/registry.hpp"

namespace sparsetune::graph {

// Each operator file defines its factory; registering an operator is one line below.
const Operator* make_row_div();
const Operator* make_col_div();
const Operator* make_bin();
const Operator* make_sort();
const Operator* make_sort_sub();
const Operator* make_row_order();
const Operator* make_hyb_split();
const Operator* make_diag_split();
const Operator* make_dense_split();
const Operator* make_crux_split();
const Operator* make_slice_div();
const Operator* make_dense_fill();
const Operator* make_compress();
const Operator* make_block(Level level, int cut);  // cut: 0 ROW, 1 COL, 2 NNZ
const Operator* make_pad(Level level);
const Operator* make_sort_bmtb();
const Operator* make_bmtb_col_sort();
const Operator* make_set_resources();
const Operator* make_col_tile();
const Operator* make_thread_total_red();
const Operator* make_thread_bitmap_red();
const Operator* make_warp_total_red();
const Operator* make_warp_seg_red();
const Operator* make_warp_bitmap_red();
const Operator* make_shmem_total_red();
const Operator* make_shmem_offset_red();
const Operator* make_gmem_atom_red();
const Operator* make_tc_compress();
const Operator* make_tc_mma_f64();
const Operator* make_tc_mma_f16();

const std::vector<const Operator*>& operators() {
  static const std::vector<const Operator*> all = [] {
    std::vector<const Operator*> v;
    // converting
    v.push_back(make_row_div());
    v.push_back(make_col_div());
    v.push_back(make_sort());
    v.push_back(make_sort_sub());
    v.push_back(make_row_order());
    v.push_back(make_bin());
    v.push_back(make_hyb_split());
    v.push_back(make_diag_split());
    v.push_back(make_dense_split());
    v.push_back(make_crux_split());
    v.push_back(make_slice_div());
    v.push_back(make_dense_fill());
    v.push_back(make_compress());
    // mapping
    for (auto l : {Level::BMTB, Level::BMW, Level::BMT})
      for (int cut = 0; cut < 3; ++cut) v.push_back(make_block(l, cut));
    for (auto l : {Level::BMTB, Level::BMW, Level::BMT}) v.push_back(make_pad(l));
    v.push_back(make_sort_bmtb());
    v.push_back(make_bmtb_col_sort());
    v.push_back(make_set_resources());
    v.push_back(make_col_tile());
    v.push_back(make_tc_compress());
    // implementing
    v.push_back(make_gmem_atom_red());
    v.push_back(make_shmem_offset_red());
    v.push_back(make_shmem_total_red());
    v.push_back(make_warp_total_red());
    v.push_back(make_warp_bitmap_red());
    v.push_back(make_warp_seg_red());
    v.push_back(make_thread_total_red());
    v.push_back(make_thread_bitmap_red());
    v.push_back(make_tc_mma_f64());
    v.push_back(make_tc_mma_f16());
    return v;
  }();
  return all;
}

const Operator* find_operator(const std::string& name) {
  for (const auto* op : operators())
    if (name == op->name()) return op;
  return nullptr;
}

const ReductionOperator* find_reduction(const std::string& name) {
  return dynamic_cast<const ReductionOperator*>(find_operator(name));
}

}  // namespace sparsetune::graph
