#include "search/row_order_collect.hpp"

#include <chrono>
#include <filesystem>

#include "core/error.hpp"
#include "core/fingerprint.hpp"
#include "core/row_orders.hpp"
#include "core/version.hpp"
#include "io/matrix_file.hpp"
#include "runtime/device.hpp"

namespace sparsetune::search {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<db::Measurement> row_order_measurements(const models::RowOrderRecord& r,
                                                    const std::string& fingerprint,
                                                    const std::string& dtype,
                                                    const std::string& device,
                                                    const std::string& arch) {
  std::vector<db::Measurement> out;
  auto base = [&] {
    db::Measurement m;
    m.fingerprint = fingerprint;
    m.op = kRowOrderOp;
    m.dtype = dtype;
    m.n = r.n;
    m.device = device;
    m.arch = arch;
    m.tool_version = kVersion;
    return m;
  };
  const auto& orders = row_orders::all_orders();
  for (std::size_t k = 0; k < orders.size(); ++k) {
    const std::string name = row_orders::name(orders[k]);
    auto m = base();
    m.candidate = "row-order/" + name;
    m.params = json{{"order", name},
                    {"order_ms", k < r.order_ms.size() ? r.order_ms[k] : -1.0},
                    {"features", r.features}}
                   .dump();
    const double t = k < r.time_us.size() ? r.time_us[k] : -1.0;
    if (t > 0) {
      m.time_us = t;
    } else {
      m.ok = false;
      m.failure = r.notes.empty() ? "not measured" : r.notes;
    }
    out.push_back(std::move(m));
  }
  if (r.cusparse_us > 0) {
    auto m = base();
    m.candidate = "cusparse/spmm-best";
    m.params = "{}";
    m.time_us = r.cusparse_us;
    out.push_back(std::move(m));
  }
  return out;
}

CollectSummary collect_row_orders_db(std::vector<CollectItem> items,
                                     const RowOrderCollectOptions& o) {
  check_row_order_options(o.timing);
  CollectSummary s;
  std::string arch = "sm_90";
  if (o.time_one) {
    s.device = "test-gpu";
  } else {
    const auto devices = runtime::list_devices();
    if (devices.empty())
      throw Error("collect --row-orders: " + runtime::device_status() +
                  ": the orders are timed on a GPU");
    s.device = devices.front().name;
    arch = devices.front().arch();
  }
  const std::string db_path = o.db_path.empty() ? db::TuningDb::default_path() : o.db_path;
  db::TuningDb db(db_path);
  const std::string gen_dir =
      o.gen_dir.empty() ? (fs::path(db_path).parent_path() / "generated").string() : o.gen_dir;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  double measured_s = 0;
  int measured = 0;
  const int total = static_cast<int>(items.size());
  for (int i = 0; i < total; ++i) {
    if (o.stop && o.stop->load()) {
      s.interrupted = true;
      break;
    }
    CollectItem& it = items[i];
    if (o.progress) {
      CollectProgress p{i, total, it.name, s.done, s.skipped, s.failed, elapsed(), -1};
      if (measured > 0) p.eta_s = measured_s / measured * (total - i);
      o.progress(p);
    }
    const double t0 = elapsed();
    ItemOutcome out;
    out.name = it.name;
    std::string fp;
    try {
      materialize(it, gen_dir);
      const Csr64 a = io::read_matrix(it.path);
      fp = fingerprint(a);
      // Only the N not yet measured on this device.
      auto opt = o.timing;
      opt.n.clear();
      for (auto n : o.timing.n)
        if (!db.last_search(fp, kRowOrderOp, opt.dtype, n, s.device)) opt.n.push_back(n);
      if (opt.n.empty()) {
        out.status = "skipped";
        out.reason = "every N timed before on " + s.device;
      } else {
        const auto records =
            o.time_one ? o.time_one(a, it.name, opt) : time_row_orders(a, it.name, opt);
        // A matrix a tune recorded keeps its row (and its features); else a row of its own.
        if (!db.matrix(fp)) db.put_matrix({fp, it.name, a.rows, a.cols, a.nnz(), "{}"});
        for (const auto& r : records) {
          for (const auto& m : row_order_measurements(r, fp, opt.dtype, s.device, arch)) db.add(m);
          db::Run run;
          run.fingerprint = fp;
          run.op = kRowOrderOp;
          run.dtype = opt.dtype;
          run.n = r.n;
          run.device = s.device;
          run.arch = arch;
          run.tool_version = kVersion;
          run.family = it.family;
          run.candidates = static_cast<std::int64_t>(r.time_us.size());
          run.search_s = run.wall_s = elapsed() - t0;
          db.add_run(run);
        }
        out.status = "done";
      }
    } catch (const NoGpu&) {
      throw;
    } catch (const std::exception& e) {
      out.status = "failed";
      out.reason = e.what();
      if (!fp.empty()) {
        db::Measurement m;
        m.fingerprint = fp;
        m.op = kRowOrderOp;
        m.dtype = o.timing.dtype;
        m.n = o.timing.n.empty() ? 0 : o.timing.n.front();
        m.device = s.device;
        m.arch = arch;
        m.tool_version = kVersion;
        m.candidate = "collect/failed";
        m.params = json{{"name", it.name}, {"source", it.source}}.dump();
        m.ok = false;
        m.failure = out.reason;
        db.add(m);
      }
    }
    out.seconds = elapsed() - t0;
    if (out.status != "skipped") measured_s += out.seconds, ++measured;
    (out.status == "done" ? s.done : out.status == "skipped" ? s.skipped : s.failed)++;
    s.items.push_back(std::move(out));
  }
  s.seconds = elapsed();
  return s;
}

}  // namespace sparsetune::search
