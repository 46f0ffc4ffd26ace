#pragma once
// The CPU side of scoring candidates on a GPU, and the pipeline that overlaps it with the
// measurements: candidates are designed and compiled by NVRTC on a pool of host threads
// (runtime/thread_pool.hpp) while the calling thread measures the ready ones in order.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "core/matrix.hpp"
#include "graph/graph.hpp"

namespace sparsetune::search {

// A candidate designed and compiled, ready to run: its launch plan with the cubin.
struct Prepared {
  bool ok = false;
  std::string failure, category;  // when !ok (search/failure.hpp)
  std::string plan_bytes;         // safetensors of the launch plan; x and y_ref come apart
  double seconds = 0;             // spent preparing it
  double design_s = 0, compile_s = 0, plan_s = 0;  // its stages: Designer, NVRTC, launch plan
};

// Where a measuring evaluator's time went, summed over its candidates: the preparing stages in
// thread-seconds (they run on several threads at once), the measurements in seconds of the one
// measuring thread. report.json shows them as "stage_seconds".
struct StageSeconds {
  int prepared = 0, measured = 0;
  double design = 0, compile = 0, plan = 0, measure = 0;
  // Of `measure`, the worker's own parts: plan read, upload and module load; the checking run;
  // the timed runs (the rest is writing the plan and the round trip).
  double worker_setup = 0, worker_check = 0, worker_timed = 0;
  void add(const Prepared& p) {
    ++prepared;
    design += p.design_s;
    compile += p.compile_s;
    plan += p.plan_s;
  }
  nlohmann::json to_json(unsigned threads) const;  // with the number of preparing threads
};

// For tests: edits a candidate's kernel source before NVRTC (plants a compile error).
using SourceEdit = std::function<void(const graph::Graph&, std::string& source)>;

// Designs `g` on `a`, compiles its kernels for `arch` and builds its launch plan (tolerance from
// `max_len`, the longest row). Never throws: failures are returned with their category.
// `spmm_n`: the columns of B of an SpMM candidate's launch plan; `layout`: its B's and C's
// ("row" or "col").
Prepared prepare_candidate(const graph::Graph& g, const Csr64& a, const std::string& dtype,
                           const std::string& arch, std::int64_t max_len,
                           const SourceEdit& edit = {}, std::int64_t spmm_n = 1,
                           const std::string& layout = "row");

// Host threads that may design candidates of this matrix at once: every core, fewer when
// memory cannot hold that many designs (about 64 bytes per entry and row each, beside the
// matrix itself), at least one.
unsigned design_slots(std::int64_t rows, std::int64_t nnz);

// The batch an evaluator built on run_pipeline prefers: enough candidates to keep every slot
// busy, at least 4.
int pipeline_batch(std::int64_t rows, std::int64_t nnz);

// The longest preparation and the longest consumption (measurement) seen, in seconds: an
// evaluator keeps one across its batches, so the first item of a batch is not started blind.
struct PipelineTimes {
  double prepare = 0, consume = 0;
};

// Prepares items 0..n-1 on up to `threads` threads, in order, and hands each to `consume` on the
// calling thread, in order, as soon as it is ready (later ones are prepared meanwhile). `start`
// is asked (one call at a time) before an item is prepared, with the seconds until that item
// would be consumed: the longest preparation, plus the longest consumption once for it and once
// for every item started but not yet consumed (they are measured one after another). Once it
// says no, nothing more starts, the items started finish, and those after the first one not
// started are not consumed. At most max(4, 2 x threads) items are prepared and not yet consumed
// at any time. `times` (may be null) carries the longest times across calls.
// Returns how many were consumed.
std::size_t run_pipeline(std::size_t n, unsigned threads, const std::function<bool(double)>& start,
                         const std::function<Prepared(std::size_t)>& prepare,
                         const std::function<void(std::size_t, Prepared&)>& consume,
                         PipelineTimes* times = nullptr);

}  // namespace sparsetune::search
