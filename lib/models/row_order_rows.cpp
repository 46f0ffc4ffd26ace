#include "models/row_order_rows.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "core/error.hpp"
#include "core/row_orders.hpp"

namespace sparsetune::models {

std::string hamming_rule(const nlohmann::json& params) {
  const auto order = params.is_object() ? params.find("order") : params.end();
  if (order == params.end() || !order->is_string()) return "";
  for (const auto o : row_orders::all_orders())
    if (row_orders::name(o) == order->get<std::string>()) {
      if (!row_orders::uses_candidates(o)) return "";
      const auto rule = params.find("candidates");
      if (rule == params.end()) return "matrix";
      return rule->is_string() ? rule->get<std::string>() : "";
    }
  return "";
}

RowOrderRows read_row_order_rows(const db::TuningDb& db, const std::string& arch,
                                 const std::string& source, row_orders::Candidates candidates) {
  using nlohmann::json;
  const auto& orders = row_orders::all_orders();
  std::map<std::string, std::size_t> index;
  for (std::size_t k = 0; k < orders.size(); ++k) index[row_orders::name(orders[k])] = k;
  RowOrderRows out;
  out.arch = arch;
  // Per (fingerprint, N): the record, its times in each collection (averaged into the record once
  // every row is read) and the sum of cuSPARSE's log times and their count.
  struct Entry {
    RowOrderRecord r;
    std::vector<int> rows_of;  // per order: its rows read so far
    CollectionTimes collections;
    double cusparse_log_sum = 0, cusparse_count = 0;
  };
  std::map<std::pair<std::string, std::int64_t>, Entry> by_key;
  std::set<std::string> other_rules;  // of the Hamming rows skipped
  std::int64_t hamming_rows = 0;
  const auto measurements = db.measurements();
  if (out.arch.empty()) {
    // None asked: the database's one architecture, or an error naming them all.
    std::map<std::string, std::int64_t> per_arch;
    for (const auto& m : measurements)
      if (m.op == kRowOrderOp) ++per_arch[m.arch];
    if (per_arch.size() > 1) {
      std::string held;
      for (const auto& [a, count] : per_arch)
        held += (held.empty() ? "" : ", ") + a + " (" + std::to_string(count) + " rows)";
      throw Error(source + ": row-order times of several architectures, " + held +
                  ": name one with --arch");
    }
    if (!per_arch.empty()) out.arch = per_arch.begin()->first;
  }
  for (const auto& m : measurements) {
    if (m.op != kRowOrderOp) continue;
    if (m.arch != out.arch) continue;
    auto [it, fresh] = by_key.try_emplace({m.fingerprint, m.n});
    Entry& e = it->second;
    RowOrderRecord& r = e.r;
    if (fresh) {
      const auto row = db.matrix(m.fingerprint);
      r.matrix = row ? row->name : m.fingerprint;
      if (row) r.rows = row->rows, r.cols = row->cols, r.nnz = row->nnz;
      r.n = m.n;
      r.time_us.assign(orders.size(), -1.0);
      r.order_ms.assign(orders.size(), -1.0);
      e.rows_of.assign(orders.size(), 0);
    }
    if (m.candidate == "cusparse/spmm-best") {
      if (m.ok && m.time_us > 0) e.cusparse_log_sum += std::log(m.time_us), ++e.cusparse_count;
      continue;
    }
    const std::string where = source + ": the row-order time of " + r.matrix +
                              " at N = " + std::to_string(m.n) + " (" + m.candidate + ")";
    json p = json::parse(m.params, nullptr, false);
    if (p.is_discarded()) throw Error(where + " has malformed params");
    if (!p.is_object()) throw Error(where + ": params must be a JSON object");
    // A field of the wrong type is named here, not met later as a bare conversion error.
    const auto numbers = [](const json& v) {
      return v.is_array() &&
             std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_number(); });
    };
    for (const auto& [field, ok, what] :
         {std::tuple<const char*, bool, const char*>{
              "order", !p.contains("order") || p["order"].is_string(), "a name"},
          {"candidates", !p.contains("candidates") || p["candidates"].is_string(), "a name"},
          {"features", !p.contains("features") || numbers(p["features"]), "a list of numbers"},
          {"order_ms", !p.contains("order_ms") || p["order_ms"].is_number(), "a number"}})
      if (!ok) throw Error(where + ": params field '" + field + "' must be " + what);
    const auto k = index.find(p.value("order", std::string()));
    if (k == index.end()) continue;  // collect/failed rows, or an order this build lacks
    if (const auto rule = hamming_rule(p); !rule.empty()) {
      if (rule != row_orders::name(candidates)) {
        other_rules.insert(rule);
        continue;
      }
      ++hamming_rows;
    }
    if (p.contains("features") && r.features.empty())
      r.features = p["features"].get<std::vector<double>>();
    r.order_ms[k->second] = p.value("order_ms", -1.0);
    const auto c = static_cast<std::size_t>(e.rows_of[k->second]++);
    if (e.collections.size() <= c)
      e.collections.resize(c + 1, std::vector<double>(orders.size(), -1.0));
    if (m.ok && m.time_us > 0) e.collections[c][k->second] = m.time_us;
    out.devices.insert(m.device);
  }
  if (hamming_rows == 0 && !other_rules.empty()) {
    std::string held;
    for (const auto& s : other_rules) held += (held.empty() ? "" : ", ") + s;
    throw Error(source + ": the Hamming orders were timed with candidates from " + held +
                ", none from " + row_orders::name(candidates) +
                " (collect --row-orders --candidates " + row_orders::name(candidates) +
                " times them; or read the rule the database holds)");
  }
  for (auto& [k, e] : by_key) {
    RowOrderRecord& r = e.r;
    r.candidates = candidates;
    for (std::size_t o = 0; o < orders.size(); ++o) {
      double log_sum = 0;
      int count = 0;
      for (const auto& t : e.collections)
        if (t[o] > 0) log_sum += std::log(t[o]), ++count;
      if (count > 0) r.time_us[o] = std::exp(log_sum / count);
    }
    if (e.cusparse_count > 0) r.cusparse_us = std::exp(e.cusparse_log_sum / e.cusparse_count);
    if (r.features.size() != row_order_feature_names().size()) continue;
    out.records.push_back(std::move(r));
    out.collections.push_back(std::move(e.collections));
  }
  return out;
}

}  // namespace sparsetune::models
