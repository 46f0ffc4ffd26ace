#pragma once
// The slice timings `collect --op sptv` put in the tuning database (op "sptv-slice"), read back as
// SliceTiming records: what `train --model slice-gcn` learns from and `eval` scores the shipped
// Slice-GCN on.
#include <set>
#include <string>
#include <vector>

#include "db/tuning_db.hpp"
#include "models/slice_labels.hpp"

namespace sparsetune::models {

struct SliceTimingRows {
  std::string arch;               // the architecture read (the first one met when none is asked)
  std::set<std::string> devices;  // that timed the slices
  std::set<std::string> tensors;  // their paths
  // One per (tensor, mode, slice, format): a slice timed on several devices or runs is the
  // geometric mean of its times. Each tensor is its recorded path, or, with `data_dir`, the file
  // of that name there.
  std::vector<SliceTiming> timings;
};

// Only `arch`'s rows ("": the first architecture met), failed runs left out. Throws Error naming
// `source` on a tensor without its row or path, malformed params or an unknown format.
SliceTimingRows read_slice_timing_rows(const db::TuningDb& db, const std::string& arch,
                                       const std::string& data_dir, const std::string& source);

}  // namespace sparsetune::models
