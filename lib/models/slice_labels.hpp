#pragma once
// Labels for Slice-GCN from measurements (IAP-SpTV §4.2): a slice's label is the format with the
// lowest measured time. Records come from timing every slice in every format on the target GPU;
// a CSV of them reads as
//     tensor,mode,slice,format,time_us
//     nips.tns,0,17,CSR,3.25
// (format: CSR, COO, ELL, HYB or Dense; '#' lines are comments).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace sparsetune::models {

struct SliceTiming {
  std::string tensor;
  int mode = 0;
  std::int64_t slice = 0;
  int format = 0;  // 0 CSR, 1 COO, 2 ELL, 3 HYB, 4 Dense
  double time_us = 0;
};

constexpr int kSliceFormats = 5;

// The tuning database's op of slice timings (collect --op sptv, train --model slice-gcn).
inline constexpr const char* kSliceTimingOp = "sptv-slice";

struct SliceLabel {
  std::string tensor;
  int mode = 0;
  std::int64_t slice = 0;
  int format = 0;     // the label: the fastest, or the lowest-numbered format tied with it
  int fastest = 0;    // the fastest measured, ties to the lower number
  int measured = 0;   // formats timed for this slice
  double margin = 0;  // second-best time / best time (1 when only one was timed)
  std::array<double, kSliceFormats> time_us{};  // per format; infinity where not timed
};

// One label per (tensor, mode, slice), sorted by them. Records with a non-finite or non-positive
// time are ignored (failed runs). The label is the lowest-numbered format whose time is within
// `tie_tolerance` of the fastest (0: the fastest itself, the lower number on an exact tie):
// formats closer than the timing noise are ties, and a fixed rule among them keeps a slice's
// label a function of its structure instead of of the noise.
std::vector<SliceLabel> label_slices(const std::vector<SliceTiming>& t, double tie_tolerance = 0.0);

// A slice's name across machines: "<tensor file name>:<mode>:<slice>" (the tensor's folder left
// out, so a model's held-out list matches the same tensor wherever it lies).
std::string slice_key(const std::string& tensor, int mode, std::int64_t slice);

// The measured time of `format` on the slice over the fastest's (infinity when not timed).
double time_ratio(const SliceLabel& l, int format);

// Throws InputError naming the file, line and field on a malformed record.
std::vector<SliceTiming> read_slice_timings(const std::string& path);

// label_slices of the file's records. Throws InputError naming the file when it holds no record
// with a positive, finite time (nothing to learn from or to score).
std::vector<SliceLabel> read_slice_labels(const std::string& path, double tie_tolerance = 0.0);

// Several collections of the same slices as one: per (tensor, mode, slice, format), the geometric
// mean of the times the collections measured (a collection cut short adds only what it timed).
// One collection's noise decides a near-tie; the mean of several decides it more often the same
// way. Tensors are matched by file name (slice_key's rule), named as the first collection names
// them. Records with a non-finite or non-positive time are left out.
std::vector<SliceTiming> merge_slice_timings(
    const std::vector<std::vector<SliceTiming>>& collections);

}  // namespace sparsetune::models
