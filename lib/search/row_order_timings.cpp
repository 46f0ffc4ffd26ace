#include "search/row_order_timings.hpp"

#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "core/error.hpp"
#include "core/row_orders.hpp"
#include "features/matrix_features.hpp"
#include "graph/spmm_graph.hpp"
#include "io/file_bytes.hpp"
#include "io/matrix_file.hpp"
#include "runtime/bench.hpp"
#include "search/collect.hpp"
#include "search/config.hpp"
#include "search/gpu_evaluator.hpp"
#include "search/tune.hpp"

namespace sparsetune::search {

graph::Graph row_order_kernel(const RowOrderTimingOptions& o, std::int64_t n, int sms) {
  check_row_order_options(o);
  const bool lanes = o.kernel == "lanes";
  const int warps = o.warps > 0 ? o.warps : lanes ? 0 : 32;
  const int per_sm = o.ctas_per_sm > 0 ? o.ctas_per_sm : lanes ? 0 : 2;
  const std::int64_t tiles = lanes ? 1 : (n + o.tn - 1) / o.tn;
  // A grid of one wave: every CTA resident at once, each walking its strips in turn, so a
  // CTA's busiest warp is the kernel's tail.
  const int ctas = per_sm > 0 && sms > 0 ? static_cast<int>(std::max<std::int64_t>(
                                               1, static_cast<std::int64_t>(sms) * per_sm / tiles))
                                         : 0;
  if (!lanes) {
    graph::StationaryOptions so;
    so.warps = warps;
    so.tn = o.tn;
    so.ctas = ctas;
    return graph::output_stationary(so);
  }
  const auto dir = o.graphs_dir.empty() ? default_graphs_dir() : o.graphs_dir;
  graph::Graph g = row_order_kernel(graph::read_graph(dir + "/csr-vector.json"), n);
  for (auto& op : g.ops)
    if (op.op == "SET_RESOURCES") {
      if (warps > 0) op.params["threads"] = 32 * warps;
      if (ctas > 0) op.params["max_blocks"] = ctas;
    }
  graph::validate(g, "spmm graph " + g.name);
  return g;
}

std::string row_order_layout(const RowOrderTimingOptions& o) {
  return o.kernel == "stationary" ? "col" : "row";
}

namespace {

// Host milliseconds of each order for the kernel's warps, computed on all cores at once (the
// Hamming orders dominate and are independent).
std::vector<double> order_costs(const Csr64& a, int warps, row_orders::Candidates candidates) {
  const auto& orders = row_orders::all_orders();
  std::vector<double> ms(orders.size(), 0.0);
  row_orders::Options opt;
  opt.warps = warps;
  opt.candidates = candidates;
  std::vector<std::thread> pool;
  const std::size_t width = std::max(1u, std::thread::hardware_concurrency());
  for (std::size_t first = 0; first < orders.size(); first += width) {
    for (std::size_t k = first; k < std::min(orders.size(), first + width); ++k)
      pool.emplace_back([&, k] {
        const auto t0 = std::chrono::steady_clock::now();
        (void)row_orders::compute_row_order(a, orders[k], opt);
        ms[k] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count();
      });
    for (auto& t : pool) t.join();
    pool.clear();
  }
  return ms;
}

// cuSPARSE's fastest verified SpMM at each N (flushed median, as the orders are timed), the peer
// the orders' table sets beside them, from one bench of the matrix; -1 with a note where none
// verified.
std::map<std::int64_t, double> cusparse_best_us(const Csr64& a, const RowOrderTimingOptions& o,
                                                const std::vector<std::int64_t>& ns,
                                                std::string* notes) {
  runtime::BenchOptions bo;
  bo.op = "spmm";
  bo.n = ns;
  bo.dtype = runtime::parse_dtype(o.dtype);
  bo.runs = o.runs;
  bo.timeout_s = o.timeout_s;
  bo.launch = o.launch;
  std::map<std::int64_t, double> best;
  for (auto n : ns) best[n] = -1;
  try {
    for (const auto& b : runtime::bench_matrix(a, bo).results) {
      auto it = best.find(b.n);
      if (it != best.end() && b.status == "ok" && b.verified && b.time_ms.median > 0 &&
          (it->second < 0 || b.time_ms.median * 1e3 < it->second))
        it->second = b.time_ms.median * 1e3;
    }
  } catch (const Error& e) {
    *notes = std::string("cuSPARSE: ") + e.what();
  }
  return best;
}

}  // namespace

void check_row_order_options(const RowOrderTimingOptions& o) {
  if (o.n.empty() && !o.n_square) throw Error("row-orders collect: no N given");
  for (auto n : o.n)
    if (n < 1 || n > 1024)
      throw Error("row-orders collect: --n must be 1 to 1024 (got " + std::to_string(n) + ")");
  if (o.dtype != "f32" && o.dtype != "f64")
    throw Error("row-orders collect: --dtype must be f32 or f64");
  if (o.runs < 1) throw Error("row-orders collect: --runs must be at least 1");
  if (o.kernel != "stationary" && o.kernel != "lanes")
    throw Error("row-orders collect: --kernel must be stationary or lanes (got '" + o.kernel +
                "')");
  if (o.tn < 1 || o.tn > 32) throw Error("row-orders collect: --tn must be 1 to 32");
  if (o.warps < 0 || o.warps > 32)
    throw Error("row-orders collect: --warps must be 0 (the kernel's own) to 32");
  if (o.ctas_per_sm < 0 || o.ctas_per_sm > 64)
    throw Error("row-orders collect: --ctas-per-sm must be 0 (the kernel's own) to 64");
}

std::vector<std::int64_t> row_order_ns(const RowOrderTimingOptions& o, std::int64_t rows,
                                       std::int64_t cols, const std::string& label) {
  if (!o.n_square) return o.n;
  if (rows != cols)
    throw Error(label + ": --n-square needs a square matrix (this one is " + std::to_string(rows) +
                " x " + std::to_string(cols) + ")");
  if (cols * cols > kSquareMaxValues)
    throw Error(label + ": --n-square: B would hold " + std::to_string(cols) + " x " +
                std::to_string(cols) + " values, above the " + std::to_string(kSquareMaxValues) +
                " allowed (a matrix of at most 32,768 rows)");
  return {cols};
}

std::vector<models::RowOrderRecord> time_row_orders(const Csr64& a, const std::string& label,
                                                    const RowOrderTimingOptions& o) {
  check_row_order_options(o);
  if (a.nnz() == 0) throw Error(label + ": the matrix has no non-zeros");
  const auto ns = row_order_ns(o, a.rows, a.cols, label);
  const auto names = models::row_order_feature_names();
  const auto feats = features::feature_values(features::permutation_features(a));
  const auto& orders = row_orders::all_orders();
  std::vector<double> costs;
  std::vector<models::RowOrderRecord> out;
  for (const auto n : ns) {
    GpuEvaluator gpu(a, o.dtype, o.launch, o.timeout_s, o.runs, n);
    gpu.set_layout(row_order_layout(o));
    std::string why;
    if (!gpu.open(&why)) throw NoGpu("row-orders collect needs a GPU: " + why);
    const auto kernel = row_order_kernel(o, n, gpu.sms());
    std::vector<Candidate> batch;
    for (std::size_t k = 0; k < orders.size(); ++k) {
      Candidate c;
      c.graph = graph::with_row_order(kernel, static_cast<int>(k), o.candidates);
      c.origin = "row-order";
      batch.push_back(std::move(c));
    }
    if (costs.empty())
      costs = order_costs(a, batch[0].graph.ops[0].params.at("warps").get<int>(), o.candidates);
    const auto ev = gpu.evaluate(batch);
    models::RowOrderRecord r;
    r.matrix = label;
    r.rows = a.rows;
    r.cols = a.cols;
    r.nnz = a.nnz();
    r.n = n;
    r.features = feats;
    r.order_ms = costs;
    r.candidates = o.candidates;
    for (std::size_t k = 0; k < orders.size(); ++k) {
      const bool ok = k < ev.size() && ev[k].ok && ev[k].measured;
      r.time_us.push_back(ok ? ev[k].time_us : -1.0);
      if (!ok)
        r.notes += (r.notes.empty() ? "" : "; ") + row_orders::name(orders[k]) + ": " +
                   (k < ev.size() ? ev[k].failure : std::string("not run"));
    }
    out.push_back(std::move(r));
  }
  // cuSPARSE once for every N, on the same device the orders ran on.
  std::string note;
  const auto cusparse = cusparse_best_us(a, o, ns, &note);
  for (auto& r : out) {
    r.cusparse_us = cusparse.at(r.n);
    if (!note.empty()) r.notes = note + (r.notes.empty() ? "" : "; " + r.notes);
  }
  return out;
}

RowOrderCollectResult collect_row_orders(
    const std::string& list, const std::string& csv, const std::string& gen_dir,
    const RowOrderTimingOptions& o, const std::function<void(const RowOrderOutcome&)>& progress) {
  check_row_order_options(o);  // before any matrix is read or generated
  auto items = read_collect_list(list);
  std::vector<models::RowOrderRecord> records;
  std::error_code ec;
  if (std::filesystem::exists(csv, ec)) records = models::read_row_order_csv(csv);
  std::set<std::string> done;
  for (const auto& r : records) done.insert(r.matrix);
  RowOrderCollectResult out;
  for (auto& it : items) {
    if (done.count(it.name)) continue;
    RowOrderOutcome item{it.name, {}, ""};
    try {
      materialize(it, gen_dir);
      item.records = time_row_orders(io::read_matrix(it.path), it.name, o);
      records.insert(records.end(), item.records.begin(), item.records.end());
      io::write_file_atomic(csv, models::row_order_csv(records));
    } catch (const NoGpu&) {
      throw;
    } catch (const Error& e) {
      item.error = e.what();
      ++out.failed;
    }
    if (progress) progress(item);
    out.items.push_back(std::move(item));
  }
  out.records = records.size();
  return out;
}

}  // namespace sparsetune::search
