#include "search/collect_loop.hpp"

#include <chrono>
#include <nlohmann/json.hpp>

#include "core/version.hpp"
#include "search/row_order_timings.hpp"

namespace sparsetune::search {

db::Measurement key_row(const CollectKey& key, const std::string& fingerprint, std::int64_t n) {
  db::Measurement m;
  m.fingerprint = fingerprint;
  m.op = key.op;
  m.dtype = key.dtype;
  m.n = n;
  m.device = key.device;
  m.arch = key.arch;
  m.tool_version = kVersion;
  return m;
}

db::Run key_run(const CollectKey& key, const std::string& fingerprint, std::int64_t n,
                const std::string& family, std::int64_t candidates, double seconds) {
  db::Run r;
  r.fingerprint = fingerprint;
  r.op = key.op;
  r.dtype = key.dtype;
  r.n = n;
  r.device = key.device;
  r.arch = key.arch;
  r.tool_version = kVersion;
  r.family = family;
  r.candidates = candidates;
  r.search_s = r.wall_s = seconds;
  return r;
}

CollectSummary collect_each(
    std::vector<CollectItem>& items, db::TuningDb& db, const CollectKey& key,
    const std::atomic<bool>* stop, const std::function<void(const CollectProgress&)>& progress,
    const std::function<ItemDone(int index, CollectItem&, std::string& fingerprint,
                                 std::int64_t& n)>& one,
    const std::vector<std::string>& labels) {
  CollectSummary s;
  s.device = key.device;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  double measured_s = 0;
  int measured = 0;
  const int total = static_cast<int>(items.size());
  for (int i = 0; i < total; ++i) {
    if (stop && stop->load()) {
      s.interrupted = true;
      break;
    }
    CollectItem& it = items[i];
    const std::string& label = labels.empty() ? it.name : labels[static_cast<std::size_t>(i)];
    if (progress) {
      CollectProgress p{i, total, label, s.done, s.skipped, s.failed, elapsed(), -1};
      if (measured > 0) p.eta_s = measured_s / measured * (total - i);
      progress(p);
    }
    const double t0 = elapsed();
    ItemOutcome out;
    out.name = label;
    std::string fp;
    std::int64_t n = 0;
    try {
      const ItemDone d = one(i, it, fp, n);
      if (d.status == "interrupted") {
        s.interrupted = true;
        break;
      }
      out.status = d.status;
      out.reason = d.reason;
    } catch (const NoGpu&) {
      throw;
    } catch (const std::exception& e) {
      out.status = "failed";
      out.reason = e.what();
      if (!fp.empty()) {
        db::Measurement m = key_row(key, fp, n);
        m.candidate = "collect/failed";
        m.params =
            nlohmann::json{{"name", it.name}, {"source", it.source}, {"family", it.family}}.dump();
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
