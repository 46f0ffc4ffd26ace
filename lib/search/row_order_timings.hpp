#pragma once
// The row-permutation predictor's labels measured (Mehrabi et al., ISPASS'21, §V): one matrix's
// SpMM timed on the GPU under each of the eleven row orders (the original and the ten
// permutations), at each N asked, every run verified against the fp64 reference. Beside each time,
// the order's own cost: the milliseconds the permutation takes on the host. `sparsetune row-orders
// collect` writes the records as the CSV that `row-orders train` reads.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/matrix.hpp"
#include "core/row_orders.hpp"
#include "graph/graph.hpp"
#include "models/row_order_model.hpp"
#include "runtime/worker.hpp"

namespace sparsetune::search {

struct RowOrderTimingOptions {
  std::vector<std::int64_t> n = {32, 128};  // columns of B
  // N = A's column count instead of `n`: B and C as large as A, the paper's own setting (§IV:
  // square matrices of at most 30K rows, "dense matrices B and C with the same dimensions as A").
  bool n_square = false;
  std::string dtype = "f32";
  int runs = 20;  // timed runs per order (median, L2 flushed)
  // "lanes": the search's warp-per-row seed with its lanes over the columns of B
  // (row_order_kernel, row-major); "stationary": Alg. 1 as the paper writes it
  // (graph::output_stationary, the lanes over a row's entries, column-major B and C).
  std::string kernel = "lanes";
  int warps = 0;        // N_w, warps per CTA (0: the kernel's own, 4 for lanes, 32 stationary)
  int tn = 8;           // stationary: columns of C per CTA
  int ctas_per_sm = 0;  // CTAs the grid holds per multiprocessor, over all column tiles, each
                        // walking strips in turn (0: lanes uncapped, stationary 2)
  // Where the Hamming orders take their candidates (core/row_orders.hpp).
  row_orders::Candidates candidates = row_orders::Candidates::shared_lines;
  std::string graphs_dir;  // the warp-per-row graph csr-vector.json ("": the shipped one)
  double timeout_s = 120;  // per order
  runtime::WorkerLaunch launch = runtime::self_worker_launch();
};

// The kernel the orders are timed under at n columns on a device of `sms` multiprocessors
// (0: unknown, the grid is not capped): the output-stationary graph, or for kernel "lanes"
// search::row_order_kernel of the csr-vector graph. Throws Error on an unknown kernel.
graph::Graph row_order_kernel(const RowOrderTimingOptions& o, std::int64_t n, int sms);
// The layout of B and C that kernel is timed in.
std::string row_order_layout(const RowOrderTimingOptions& o);

// Throws Error on options no collect can run with (no N, an N outside 1 to 1024, a value type
// other than f32 or f64, runs below 1): checked before any matrix is read or generated.
void check_row_order_options(const RowOrderTimingOptions& o);

// The Ns a matrix of `rows` x `cols` is timed at: o.n, or with o.n_square its column count.
// Throws Error where n_square would make B or C larger than kSquareMaxValues values (the worker
// keeps them, their inputs and the fp64 reference on the host too).
constexpr std::int64_t kSquareMaxValues = std::int64_t{1} << 30;
std::vector<std::int64_t> row_order_ns(const RowOrderTimingOptions& o, std::int64_t rows,
                                       std::int64_t cols, const std::string& label);

// Thrown by time_row_orders when there is no GPU to time on (it names why).
class NoGpu : public Error {
 public:
  using Error::Error;
};

// One record per N. Throws NoGpu without a GPU, Error for bad options; an order that fails to
// design, compile or verify has time -1 and its reason in the record's notes.
std::vector<models::RowOrderRecord> time_row_orders(const Csr64& a, const std::string& label,
                                                    const RowOrderTimingOptions& o);

// `row-orders collect`: every matrix of a list (as search::read_collect_list reads it; generated
// ones written to gen_dir) not yet in the CSV at `csv` is timed, and the CSV rewritten after
// each, so an interrupted run keeps what it measured and the same command resumes. A matrix
// that fails is reported and the run goes on; NoGpu ends it. `progress` sees each outcome.
struct RowOrderOutcome {
  std::string name;
  std::vector<models::RowOrderRecord> records;  // empty when it failed
  std::string error;
};
struct RowOrderCollectResult {
  std::vector<RowOrderOutcome> items;  // those timed now, in list order
  std::size_t records = 0;             // in the CSV now
  int failed = 0;
};
RowOrderCollectResult collect_row_orders(
    const std::string& list, const std::string& csv, const std::string& gen_dir,
    const RowOrderTimingOptions& o,
    const std::function<void(const RowOrderOutcome&)>& progress = {});

}  // namespace sparsetune::search
