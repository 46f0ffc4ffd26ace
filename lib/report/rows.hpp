#pragma once
// Internal to lib/report: how report and eval read tuning-database rows.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

#include "db/tuning_db.hpp"

namespace sparsetune::report {

// Rows comparable with each other: one matrix, operation, n, value type and device.
using RowKey = std::tuple<std::string, std::string, std::string, std::int64_t, std::string>;

inline RowKey key_of(const db::Measurement& m) {
  return {m.fingerprint, m.op, m.dtype, m.n, m.device};
}
inline RowKey key_of(const db::Run& r) { return {r.fingerprint, r.op, r.dtype, r.n, r.device}; }

// A row's parameter JSON; an empty object when it is not one.
inline nlohmann::json params_of(const db::Measurement& m) {
  nlohmann::json p = nlohmann::json::parse(m.params, nullptr, false);
  return p.is_object() ? p : nlohmann::json::object();
}

// The operation as shown: SpMM's dense columns (SpTV's mode) tell rows of one matrix apart.
inline std::string op_label(const std::string& op, std::int64_t n) {
  return n == 1 ? op : op + " n=" + std::to_string(n);
}

}  // namespace sparsetune::report
