#pragma once
// `tune --op sptv`: one tensor and mode in, the hybrid slice format (HTF) and its kernels out.
// Slices the tensor along the smallest other mode, picks every slice's format by the two stages
// of IAP-SpTV §4 (density >= sp: Dense; else Slice-GCN, or the structural rule without a trained
// model for the architecture), builds the SLICE_DIV graph, checks it on the CPU interpreter
// against the fp64 SpTV reference, compiles it with NVRTC and writes DIR/format.safetensors,
// kernel.cu, kernel.h, graph.json and report.json. With a budget and a GPU, the kernels also run
// on the device (through the worker) and are verified against the fp64 reference and timed.
#include <atomic>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "graph/sptv_graph.hpp"
#include "runtime/worker.hpp"
#include "search/tune.hpp"

namespace sparsetune::search {

struct SptvTuneOptions {
  std::string tensor;         // .tns, .tns.gz or .safetensors
  int mode = 0;               // Y = X ×_mode v
  int slice_mode = -1;        // -1: the smallest other mode
  std::string dtype = "f64";  // f64 | f32
  std::string out_dir;        // "": <tensor name>.mode<k>.tuned
  double budget_s = 0;        // 0: predict only; > 0: verify and time on a GPU when one is there
  double sparsity_threshold = 0.23;  // stage 1's sp
  std::string model;  // Slice-GCN file; "": configs/models/<arch>/slice_gcn.safetensors
  std::string arch;   // NVRTC target without a GPU ("": sm_90)
  int hyb_width = 0;  // HYB's H; 0: graph::hyb_width of the HYB slices
  // One format for every slice (CSR, COO, ELL, HYB or Dense) instead of the two-stage selection:
  // HTF against the single formats it chooses among. "": select.
  std::string slice_format;
  // COO slices in column-sorted thread blocks (x read in sweeps, fibers summed in shared memory)
  // instead of COO's atomics into y.
  bool coo_sorted = false;
  // Entries a column-sorted COO block holds at most; 0: graph::sorted_coo_block_nnz of the part.
  int coo_block_nnz = 0;
  // With a budget and a GPU: rank the measured designs by Alg. 1's pipeline from host memory
  // (each design's best stream count) instead of by the kernels' device-resident time.
  bool rank_transfers = false;
  // Parts per slice format in the emitted design (Alg. 1's batches: kernel.h's run_pipelined
  // overlaps one part's copy with another's kernel); 1: one part per format.
  int batches = 1;
  bool use_gpu = true;
  runtime::WorkerLaunch launch = runtime::self_worker_launch();
};

TuneOutcome tune_sptv(const SptvTuneOptions& o);

// The default Slice-GCN file of an architecture (SPARSETUNE_CONFIG_DIR overrides the folder).
std::string default_slice_model(const std::string& arch);

}  // namespace sparsetune::search
