#pragma once
// `collect --op sptv`: Slice-GCN's labels (search/slice_timings.hpp) measured over a corpus of
// tensors into the tuning database, where `train --model slice-gcn` reads them. One tensor at a
// time, every mode; resumable per tensor and mode (the runs table: op "sptv-slice", n = the mode,
// value type, device). Each slice's time in each format is a measurement row: op "sptv-slice",
// n = mode, candidate "slice/<S>/<FORMAT>", params {"slice", "format"}. The tensor's row holds
// its path (features.path), so that training can read its slices again.
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "db/tuning_db.hpp"
#include "models/slice_labels.hpp"
#include "search/collect.hpp"
#include "search/slice_timings.hpp"

namespace sparsetune::search {

inline constexpr const char* kSliceOp = models::kSliceTimingOp;

// A folder (its .tns, .tns.gz, .mtx, .mtx.gz and .safetensors files), one file, or a list of
// paths (PATH [FAMILY] a line, as collect reads them; `gen` lines are refused by LIST:LINE). A
// matrix is one slice, timed along mode 1 only (io/slice_source.hpp).
std::vector<CollectItem> read_tensor_list(const std::string& list_or_dir);

// One tensor's records as database rows (see above).
std::vector<db::Measurement> slice_measurements(const std::vector<models::SliceTiming>& records,
                                                const std::string& fingerprint,
                                                const std::string& dtype, const std::string& device,
                                                const std::string& arch);

struct SliceCollectOptions {
  std::string db_path;        // "": TuningDb::default_path()
  SliceTimingOptions timing;  // value type, slices sampled, runs, budgets of the copies
  const std::atomic<bool>* stop = nullptr;
  std::function<void(const CollectProgress&)> progress;
  // For tests: what a tensor mode's timing returns, instead of the GPU (device and arch then
  // "test-gpu" and "sm_90").
  std::function<SliceTimingResult(const SparseTensor&, const SliceTimingOptions&)> time_one;
};

// Throws Error before anything runs when there is no GPU (unless time_one).
CollectSummary collect_slices(const std::vector<CollectItem>& items, const SliceCollectOptions& o);

}  // namespace sparsetune::search
