#pragma once
// Slice-GCN's labels measured (IAP-SpTV §4.2): a sample of one tensor's slices, each slice timed
// on the GPU in each of the five slice formats. Every format is one design in which each sampled
// slice, repeated enough times to fill the GPU, is a SLICE_DIV part of its own (so a kernel of
// its own); the design's full run is verified against the fp64 reference, then each slice's
// launches are timed alone (L2 flushed, median) and divided by its copies. `sparsetune slice-gcn
// collect` writes the records as the CSV that `slice-gcn train` and `slice-gcn sp` read.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "codegen/emit.hpp"
#include "codegen/launch_plan.hpp"
#include "core/sptv_matrix.hpp"
#include "graph/sptv_graph.hpp"
#include "models/slice_labels.hpp"
#include "runtime/worker.hpp"

namespace sparsetune::search {

// Up to `count` non-empty slices of the view, spread evenly over them ranked by entries (the
// largest always among them), ascending by index. Slices of fewer than `min_nnz` entries are
// left out.
std::vector<std::int64_t> sample_slices(const SptvMatrix& m, int count, std::int64_t min_nnz = 1);

// The view restricted to the rows of `slices` (sorted indices): the same dims, modes and slice
// count, the other slices empty.
SptvMatrix keep_slices(const SptvMatrix& m, const std::vector<std::int64_t>& slices);

// A slice alone is a few hundred fibers: timed alone, a format that gives each fiber a thread
// measures the GPU's latency, not the slice's cost. HTF runs all slices of a format as one batch,
// so each sampled slice is timed as `copies` copies of itself, enough to fill the GPU, and its
// time is the copies' time divided by their number. The copies of slices[i] become slice
// indices of their own, consecutive, all in part i.
struct Replicated {
  SptvMatrix view;
  std::vector<int> part_of_slice;  // one entry per slice of `view`
  int parts = 0;
};
Replicated replicate_slices(const SptvMatrix& m, const std::vector<std::int64_t>& slices,
                            const std::vector<int>& copies);

// Per slice: ceil(target_rows / its fibers), from 1 to max_copies and to max_entries / its
// entries.
std::vector<int> slice_copies(const SptvMatrix& m, const std::vector<std::int64_t>& slices,
                              std::int64_t target_rows, int max_copies,
                              std::int64_t max_entries = std::int64_t{1} << 62);

// The sampled slices cut into consecutive batches, each designed and timed on its own so that a
// design holds at most `budget` of the given sizes (a slice's copies' entries or Dense values);
// a slice above the budget alone is a batch of its own. Returns each batch's first index, and
// the size of `sizes` last.
std::vector<std::size_t> slice_batches(const std::vector<std::int64_t>& sizes, std::int64_t budget);

// One slice format for every slice of the view, the parts as `part_of_slice` says;
// groups[i] lists the plan's launches of part i.
struct SliceDesign {
  codegen::Emitted emitted;
  codegen::SpmvPlan plan;
  nlohmann::json groups;
};
SliceDesign design_slices(const Replicated& r, graph::SliceFormat fmt, int hyb_width,
                          const std::string& dtype);

struct SliceTimingOptions {
  std::string tensor;  // .tns, .tns.gz or .safetensors
  std::string label;   // the tensor column of the records ("": `tensor`)
  int mode = 0;        // Y = X ×_mode v; sliced as tune --op sptv slices it
  std::string dtype = "f32";
  int max_slices = 64;       // sampled per tensor and mode
  std::int64_t min_nnz = 1;  // smaller slices are not sampled
  // A slice's copies aim for `target_rows` fibers, enough for each format's kernel to run many
  // waves, as a batch of thousands of slices does in HTF; at most `max_copies` copies and
  // `slice_entries` entries. Dense is timed only where the copies store at most `slice_dense`
  // values. At 2^18 fibers (one wave) the five formats' kernels ran 6-9 us on an H200, mostly
  // launch and memory latency: a quarter of the stage-2 slices were decided by under 1 %, and
  // the labels changed on 31 % of them at 2^21 fibers (15-24 us), where they are more
  // reproducible and more predictable from the slice (docs/benchmarks.md, "Slice-GCN's labels
  // at 2^21 fibers").
  std::int64_t target_rows = std::int64_t{1} << 21;
  int max_copies = 1 << 21;
  std::int64_t slice_entries = std::int64_t{1} << 22;
  std::int64_t slice_dense = std::int64_t{1} << 25;
  // The sampled slices are designed and timed in batches of at most this many entries a design.
  std::int64_t design_entries = std::int64_t{1} << 24;
  // Flushed runs per slice and format (the median is kept). A slice's runs cost microseconds
  // beside its design and compile: over the shipped labels' sources on an H100, 60 runs took
  // 311 s against 10 runs' 267 s, and two collections then name the same fastest format for
  // 90-92 % of the slices instead of 85-88 %.
  int runs = 60;
  runtime::WorkerLaunch launch = runtime::self_worker_launch();
};

// What time_slices measures, settled on the host before any GPU work: the sampled slices, the
// view of them alone, each one's copies, HYB's width as tune --op sptv sets it for them, and the
// batches (each one's first index into `chosen`, then chosen.size(), as slice_batches gives).
// `chosen` is empty, and the rest too, when no slice has o.min_nnz entries.
struct SlicePlan {
  std::vector<std::int64_t> chosen;
  SptvMatrix m;
  std::vector<int> copies;
  int hyb_width = 0;
  std::vector<std::size_t> batch_starts;
};
SlicePlan plan_slices(const SptvMatrix& full, const SliceTimingOptions& o);

struct SliceTimingResult {
  std::vector<models::SliceTiming> records;
  nlohmann::json notes = nlohmann::json::array();  // formats skipped or failed, and why
  std::string device;
};

// Throws Error without a GPU (naming why), for a bad tensor or mode.
SliceTimingResult time_slices(const SliceTimingOptions& o);
// The same for a tensor already read (o.tensor names it in errors and, without o.label, in the
// records).
SliceTimingResult time_slices(const SparseTensor& t, const SliceTimingOptions& o);

// The CSV form read_slice_timings reads, header included.
std::string slice_timings_csv(const std::vector<models::SliceTiming>& records);

}  // namespace sparsetune::search
