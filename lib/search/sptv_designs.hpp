#pragma once
// HTF designs for `tune --op sptv`: one format per slice makes a SLICE_DIV graph and its kernels;
// with a GPU, the selection is measured against every slice in one format and the fastest kept.
// A slice's label is its own kernel time, but a whole tensor's time also follows the bytes its
// formats store and how many kernels run, which only a measurement of the whole design sees.
#include <array>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "codegen/emit.hpp"
#include "codegen/launch_plan.hpp"
#include "core/sptv_matrix.hpp"
#include "features/slice_graph.hpp"
#include "graph/sptv_graph.hpp"
#include "models/slice_selector.hpp"
#include "runtime/worker.hpp"

namespace sparsetune::search {

// What every design of one tensor view shares.
struct SptvDesignContext {
  const SptvMatrix& view;
  const std::vector<features::SliceInput>& inputs;  // one per non-empty slice
  graph::SliceStats stats;
  codegen::EmitOptions emit;  // design options of the view; the slice table is filled per design
  int hyb_width = 0;          // HYB's H; 0: graph::hyb_width of the HYB slices
  int batches = 1;            // parts per slice format
  std::string name;           // the graph's name
  int coo_block_nnz = 0;  // column-sorted COO: entries a block at most (0: sorted_coo_block_nnz)
};

// The formats a design can hold for every slice, as the search's and the prediction's single-format
// candidates: Dense stores every column of a slice and is never one.
inline constexpr std::array<graph::SliceFormat, 4> kSingleSliceFormats = {
    graph::SliceFormat::CSR, graph::SliceFormat::COO, graph::SliceFormat::ELL,
    graph::SliceFormat::HYB};

struct SptvDesign {
  std::vector<models::SliceChoice> choices;   // one per input, in the inputs' order
  std::vector<graph::SliceFormat> format_of;  // per index of the slice mode
  std::vector<int> count;                     // slices per format
  int hyb_width = 1;
  // The COO slices' graph, as graph::sptv_graph takes it: 0 atomics, else column-sorted blocks of
  // this many entries at most or graph::kSortedCooAuto. The pipeline's batched cuts keep it.
  int coo_block_nnz = 0;
  bool coo_sorted() const { return coo_block_nnz != 0; }
  graph::Graph graph;
  codegen::Emitted emitted;
  double design_s = 0;  // host seconds design_sptv took
  // {"CSR": slices, "COO": ..., ...}: `count` by format name, as reports give it.
  nlohmann::json slices_by_format() const;
  // Whether every slice is stored in format f (true for any f when there is no slice).
  bool all_in(graph::SliceFormat f) const {
    return count[static_cast<std::size_t>(f)] == static_cast<int>(choices.size());
  }
};

SptvDesign design_sptv(const SptvDesignContext& c, std::vector<models::SliceChoice> choices,
                       bool coo_sorted = false);

struct SptvSearchOptions {
  double budget_s = 0;          // the single formats are tried while it lasts
  bool rank_transfers = false;  // rank by Alg. 1's pipeline (best stream count), not the kernels
  std::string dtype;
  std::int64_t max_len = 1;
  runtime::WorkerLaunch launch;
  std::size_t ahead = 0;  // single formats designed ahead of their runs (0: by cores and memory)
  // How a design runs; empty: on the GPU (sptv_device_run, or with rank_transfers
  // sptv_gpu_runs). A stand-in (tests) returns the same JSON and calls on_device once the design
  // would be on the device.
  std::function<nlohmann::json(const SptvDesign&, const std::function<void()>& on_device)> run;
  // The first design's row name: "selected" when it is Slice-GCN's selection. When the predicted
  // design (predict_sptv_design) is a single format instead, its name, and `selection` holds the
  // selection, which is then measured after the single formats.
  std::string first_label = "selected";
  std::vector<models::SliceChoice> selection;
  bool selection_coo_sorted = false;  // its COO slices in column-sorted blocks (--coo-sorted)
};

struct SptvSearch {
  SptvDesign best;
  nlohmann::json rows = nlohmann::json::array();  // one per design: design, format_bytes,
                                                  // time_ms [, pipeline_ms] or note
  // The best design's GPU result: its device-resident run (sptv_device_run), and with
  // rank_transfers its pipeline too (sptv_gpu_runs).
  std::optional<nlohmann::json> gpu;
};

// Bytes an entry each of `formats` stores when it holds every slice, measured by designing it on
// a sample of the slices: every k-th non-empty slice, k chosen for about `sample_nnz` entries
// (every slice when the view holds fewer). A sample's index arrays may narrow where the whole
// view's would not (fewer rows), so this orders the formats more than it sizes them.
std::vector<double> sampled_bytes_per_entry(const SptvDesignContext& c,
                                            const std::vector<graph::SliceFormat>& formats,
                                            std::int64_t sample_nnz = std::int64_t{1} << 20);

// The predicted design first (the selection, or the single format that predict_sptv_design found
// to store fewer bytes; its row says "predicted"): a GPU that cannot run it ends the search there.
// Then all-CSR, all-COO, all-ELL and all-HYB (Dense stores every column: never tried), and ranked
// by the kernels all-COO in column-sorted thread blocks (more bytes than COO's, but x read in
// sweeps: it pays on the device, not over the bus), each verified against the fp64 reference in
// `inputs`. Ranked by transfers, where the pipeline's time follows the bytes sent, the single
// formats of a view above 4 samples' worth of entries go in the order of their sampled bytes
// (smallest first), so a budget that ends early has measured the likeliest. Sets *arch to the
// device's.
SptvSearch search_sptv_designs(const SptvDesignContext& c, SptvDesign first,
                               const SparseTensor& tensor, const codegen::PlanInputs& inputs,
                               const SptvSearchOptions& o, std::string* arch);

}  // namespace sparsetune::search
