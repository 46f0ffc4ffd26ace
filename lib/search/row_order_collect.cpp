#include "search/row_order_collect.hpp"

#include <chrono>
#include <filesystem>

#include "core/error.hpp"
#include "core/fingerprint.hpp"
#include "core/row_orders.hpp"
#include "io/matrix_file.hpp"
#include "models/row_order_rows.hpp"
#include "runtime/device.hpp"
#include "search/collect_loop.hpp"

namespace sparsetune::search {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<db::Measurement> row_order_measurements(const models::RowOrderRecord& r,
                                                    const std::string& fingerprint,
                                                    const std::string& dtype,
                                                    const std::string& device,
                                                    const std::string& arch) {
  std::vector<db::Measurement> out;
  const CollectKey key{kRowOrderOp, dtype, device, arch};
  auto base = [&] { return key_row(key, fingerprint, r.n); };
  const auto& orders = row_orders::all_orders();
  for (std::size_t k = 0; k < orders.size(); ++k) {
    const std::string name = row_orders::name(orders[k]);
    auto m = base();
    m.candidate = "row-order/" + name;
    json p = {{"order", name},
              {"order_ms", k < r.order_ms.size() ? r.order_ms[k] : -1.0},
              {"features", r.features}};
    if (row_orders::uses_candidates(orders[k])) p["candidates"] = row_orders::name(r.candidates);
    m.params = p.dump();
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

namespace {

// Whether (fingerprint, n) was timed on `key`'s device with the Hamming orders under `rule`: its
// rows carry the rule (rows without it took the matrix's order).
bool timed_under(const db::TuningDb& db, const CollectKey& key, const std::string& fp,
                 std::int64_t n, row_orders::Candidates rule) {
  for (const auto& m : db.measurements(fp)) {
    if (m.op != kRowOrderOp || m.n != n || m.device != key.device || m.dtype != key.dtype) continue;
    json p;
    try {
      p = json::parse(m.params);
    } catch (const json::exception&) {
      continue;
    }
    if (models::hamming_rule(p) == row_orders::name(rule)) return true;
  }
  return false;
}

}  // namespace

CollectSummary collect_row_orders_db(std::vector<CollectItem> items,
                                     const RowOrderCollectOptions& o) {
  check_row_order_options(o.timing);
  CollectKey key{kRowOrderOp, o.timing.dtype, "test-gpu", "sm_90"};
  if (!o.time_one) {
    const auto devices = runtime::list_devices();
    if (devices.empty())
      throw Error("collect --row-orders: " + runtime::device_status() +
                  ": the orders are timed on a GPU");
    key.device = devices.front().name;
    key.arch = devices.front().arch();
  }
  const std::string db_path = o.db_path.empty() ? db::TuningDb::default_path() : o.db_path;
  db::TuningDb db(db_path);
  const std::string gen_dir =
      o.gen_dir.empty() ? (fs::path(db_path).parent_path() / "generated").string() : o.gen_dir;
  return collect_each(
      items, db, key, o.stop, o.progress,
      [&](int, CollectItem& it, std::string& fp, std::int64_t& n) -> ItemDone {
        const auto t0 = std::chrono::steady_clock::now();
        materialize(it, gen_dir);
        const Csr64 a = io::read_matrix(it.path);
        fp = fingerprint(a);
        // Only the N not yet measured on this device under this candidate rule.
        auto opt = o.timing;
        opt.n.clear();
        for (auto k : o.timing.n)
          if (!db.last_search(fp, kRowOrderOp, key.dtype, k, key.device) ||
              !timed_under(db, key, fp, k, o.timing.candidates))
            opt.n.push_back(k);
        if (opt.n.empty())
          return {"skipped", "every N timed before on " + key.device + " with candidates from " +
                                 row_orders::name(o.timing.candidates)};
        n = opt.n.front();
        const auto records =
            o.time_one ? o.time_one(a, it.name, opt) : time_row_orders(a, it.name, opt);
        // A matrix a tune recorded keeps its row (and its features); else a row of its own.
        if (!db.matrix(fp)) db.put_matrix({fp, it.name, a.rows, a.cols, a.nnz(), "{}"});
        for (const auto& r : records) {
          for (const auto& m : row_order_measurements(r, fp, key.dtype, key.device, key.arch))
            db.add(m);
          db.add_run(key_run(
              key, fp, r.n, it.family, static_cast<std::int64_t>(r.time_us.size()),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
        }
        return {};
      });
}

}  // namespace sparsetune::search
