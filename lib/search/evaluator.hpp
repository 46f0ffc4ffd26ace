#pragma once
// Candidates and how they are scored. The engine asks an Evaluator for a batch at a time, so a
// measuring evaluator can compile the next candidates while the current one runs. The cost-model
// evaluator needs no GPU: it designs the format and predicts its time (models/cost_model.hpp).
#include <cstdint>
#include <exception>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/matrix.hpp"
#include "graph/graph.hpp"
#include "models/cost_model.hpp"
#include "search/failure.hpp"
#include "search/row_sample.hpp"

namespace sparsetune::search {

struct Candidate {
  graph::Graph graph;
  std::string structure;            // graph_hash of the structure it was made from
  std::vector<std::int64_t> point;  // its values on the structure's tunable slots
  std::string origin;               // baseline | seed:<name> | grown
  int level = 2;                    // 2: coarse grid, 3: predicted from the fine grid
  double predicted_us = -1;         // the cost model's time, where it ranked this one; -1: none
  double learned_us = -1;           // the learned ranking's time, where it ranked this one
};

struct Evaluation {
  bool ok = false;        // designed, ran (or was modeled) and gave the right answer
  bool measured = false;  // timed on the GPU; false: predicted by the cost model
  // The time the search ranks by (flushed median, or warm with GpuEvaluator::rank_warm) and its
  // rates.
  double time_us = 0, gflops = 0, gbs = 0;
  double error = -1;    // relative L2 error against the fp64 reference (-1: not run)
  std::string failure;  // why not ok
  nlohmann::json detail = nlohmann::json::object();
  std::string category;   // of the failure (search/failure.hpp); "": classified from `failure`
  double flushed_us = 0;  // the flushed median whenever it was measured (0: not measured)
};

// Marks `e` failed by an exception thrown while designing or compiling it (category from its type).
void fail_with(Evaluation& e, const std::exception& ex, const std::string& prefix = "");

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  virtual bool measures() const = 0;
  virtual std::string device() const = 0;  // the database's device key
  virtual std::string arch() const = 0;
  virtual std::vector<Evaluation> evaluate(const std::vector<Candidate>& batch) = 0;
  // As evaluate, but starts a candidate only while `go(seconds)` says there is time left for
  // work of that many seconds (the longest preparation seen so far), and returns the evaluations
  // of those finished (a prefix of the batch). The default scores the whole batch.
  virtual std::vector<Evaluation> evaluate_until(const std::vector<Candidate>& batch,
                                                 const std::function<bool(double)>& go) {
    (void)go;
    return evaluate(batch);
  }
  // Candidates it likes to be handed at once (enough to keep its preparing threads busy).
  virtual int preferred_batch() const { return 4; }
  // Seconds per stage (design, compile, plan, measure) for report.json; null when it has none.
  virtual nlohmann::json stage_seconds() const { return nullptr; }
};

// GFLOP/s and the fewest-bytes GB/s of one SpMV of `a` taking `time_us` (n >= 1: one SpMM with
// n columns of B).
void fill_rates(Evaluation& e, const Csr64& a, const std::string& dtype, std::int64_t n = 0);
int value_bytes(const std::string& dtype);  // f64 8, f32 4, f16 2

// Predicts with the cost model. Matrices above `kCostModelSampleNnz` entries are designed on a
// row sample (search/row_sample.hpp) and the sample's time past the launch is scaled by the
// ratio of entries: prediction stays in milliseconds per candidate whatever the matrix size.
inline constexpr std::int64_t kCostModelSampleNnz = 1 << 18;

class CostModelEvaluator : public Evaluator {
 public:
  // `spmm_n`: the columns of B the SpMM candidates multiply (SpMV candidates ignore it).
  CostModelEvaluator(const Csr64& a, std::string dtype, models::DeviceSpec dev = {},
                     std::int64_t spmm_n = 1);
  bool measures() const override { return false; }
  std::string device() const override { return "cost-model"; }
  std::string arch() const override { return "sm_90"; }
  std::vector<Evaluation> evaluate(const std::vector<Candidate>& batch) override;
  Evaluation evaluate_one(const graph::Graph& g) const;

 private:
  const Csr64& a_;
  RowSample sample_;
  std::string dtype_;
  models::DeviceSpec dev_;
  std::int64_t spmm_n_ = 1;
};

}  // namespace sparsetune::search
