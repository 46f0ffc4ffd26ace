#pragma once
// `collect --op spmm --row-orders`: the row-order predictor's labels (search/row_order_timings.hpp)
// measured over a corpus into the tuning database, where `train --model row-order` reads them.
// One matrix at a time, resumable per matrix and N (the runs table: op "spmm-row-order", n = N,
// value type, device). Each order's time at each N is a measurement row: candidate
// "row-order/<ORDER>", params {"order", "order_ms" (the permutation's host cost), "features"
// (Table II's 24), and for the Hamming orders "candidates" (their rule; rows written before it
// was recorded took the matrix's order)}; cuSPARSE's fastest SpMM beside them is
// "cusparse/spmm-best". A matrix and N count as done on a device once a run is recorded and its
// Hamming rows carry the rule asked for: timing the other rule adds a round to the same database
// (`train` reads the Hamming orders of one rule and every other order from all rounds).
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "core/matrix.hpp"
#include "db/tuning_db.hpp"
#include "models/row_order_model.hpp"
#include "search/collect.hpp"
#include "search/row_order_timings.hpp"

namespace sparsetune::search {

using models::kRowOrderOp;

// One record (one matrix at one N) as database rows (see above).
std::vector<db::Measurement> row_order_measurements(const models::RowOrderRecord& r,
                                                    const std::string& fingerprint,
                                                    const std::string& dtype,
                                                    const std::string& device,
                                                    const std::string& arch);

struct RowOrderCollectOptions {
  std::string db_path;  // "": TuningDb::default_path()
  std::string gen_dir;  // generated matrices ("": <db folder>/generated)
  RowOrderTimingOptions timing;
  const std::atomic<bool>* stop = nullptr;
  std::function<void(const CollectProgress&)> progress;
  // For tests: the records of one matrix, instead of the GPU (device "test-gpu", arch sm_90).
  std::function<std::vector<models::RowOrderRecord>(const Csr64&, const std::string&,
                                                    const RowOrderTimingOptions&)>
      time_one;
};

// Throws Error for bad options before anything runs, and when there is no GPU (unless time_one).
CollectSummary collect_row_orders_db(std::vector<CollectItem> items,
                                     const RowOrderCollectOptions& o);

}  // namespace sparsetune::search
