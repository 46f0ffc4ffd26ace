#include "graph/operator.hpp"

#include "graph/registry.hpp"

namespace sparsetune::graph {

const char* stage_name(Stage s) {
  switch (s) {
    case Stage::Converting:
      return "converting";
    case Stage::Mapping:
      return "mapping";
    case Stage::Implementing:
      return "implementing";
  }
  return "?";
}

namespace {
const char* kArrNames[kArrays] = {
    "bmtb_first_bmw", "bmw_first_bmt", "bmt_first_nz", "bmt_stride",   "bmt_size",
    "bmt_row",        "bmw_row",       "bmtb_row",     "bmtb_rows",    "nz_col",
    "nz_row_delta",   "origin_row",    "nz_val",       "bmw_first_nz", "bmtb_first_nz",
    "bmw_first_tc",   "tc_bit",        "tc_col",       "tc_ptr",       "nz_col_hi"};
const char* kRedLevel[4] = {"thread", "warp", "block", "global"};
}  // namespace

const char* arr_name(Arr a) { return kArrNames[static_cast<int>(a)]; }

std::optional<Arr> arr_from_name(const std::string& name) {
  for (int i = 0; i < kArrays; ++i)
    if (name == kArrNames[i]) return static_cast<Arr>(i);
  return std::nullopt;
}

bool Operator::serves(const std::string& op) const {
  for (const auto& o : ops())
    if (o == op) return true;
  return false;
}

std::string Operator::rule(const GraphState& s, const nlohmann::json& p) const {
  if (!serves(s.op)) {
    std::string list;
    for (const auto& o : ops()) list += (list.empty() ? "" : ", ") + o;
    return std::string(name()) + " serves op " + list + " only, not " + s.op;
  }
  return precondition(s, p);
}

std::string ReductionOperator::precondition(const GraphState& s, const nlohmann::json&) const {
  if (!s.compressed || s.finest < 0)
    return "implementing operators follow the mapping (COMPRESS and a *_BLOCK operator)";
  const int l = static_cast<int>(level());
  if (s.last_reduction < 0 && level() != RedLevel::Thread)
    return "the first reduction is a thread-level one (THREAD_TOTAL_RED or THREAD_BITMAP_RED)";
  // A part stored for tensor cores is implemented by one tensor-core operator of its block width.
  if (s.tc_width != tc_width() && tc_width() == 0)
    return "a part stored by TC_COMPRESS is implemented by a tensor-core operator alone";
  if (s.tc_width != tc_width())
    return std::string(name()) + " implements a part stored by TC_COMPRESS";
  if (s.col_lanes > 1 && !serves_lane_groups())
    return std::string(name()) + " pairs lanes with thread blocks, but COL_TILE's " +
           std::to_string(s.col_lanes) +
           " lanes share each thread block (lanes = 1, or reduce "
           "with WARP_TOTAL_RED)";
  if (s.col_sorted && !takes_any_row_order())
    return std::string(name()) +
           " pairs the rows of neighbouring entries, but BMTB_COL_SORT put them in column "
           "order (THREAD_TOTAL_RED, THREAD_BITMAP_RED, SHMEM_OFFSET_RED or GMEM_ATOM_RED)";
  if (l <= s.last_reduction)
    return std::string("reductions go thread, warp, block, global: a ") + kRedLevel[l] +
           " reduction cannot follow a " + kRedLevel[s.last_reduction] + " one";
  return "";
}

void ReductionOperator::advance(GraphState& s, const nlohmann::json&) const {
  s.last_reduction = static_cast<int>(level());
  s.reductions.push_back(name());
}

std::vector<Part> ReductionOperator::apply(Part& part, const nlohmann::json&) const {
  part.reductions.push_back(name());
  return {};
}

void require_one_row(const Part& part, Level l, const char* op) {
  const auto& blocks = part.blocks[static_cast<int>(l)];
  for (std::size_t i = 0; i < blocks.size(); ++i)
    if (blocks[i].row_lo != blocks[i].row_hi)
      throw DesignError(std::string(op) + ": rule: every " + level_name(l) +
                        " must hold one row, but " + level_name(l) + " " + std::to_string(i) +
                        (part.path.empty() ? "" : " of part " + part.path) + " spans local rows " +
                        std::to_string(blocks[i].row_lo) + ".." + std::to_string(blocks[i].row_hi));
}

}  // namespace sparsetune::graph
