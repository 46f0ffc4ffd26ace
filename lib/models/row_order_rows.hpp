#pragma once
// The row-order times `collect --op spmm --row-orders` put in the tuning database (op
// "spmm-row-order"), read back as one record per (matrix, N): what `train --model row-order`
// learns from and `eval` scores the shipped model on.
#include <set>
#include <string>
#include <vector>

#include "db/tuning_db.hpp"
#include "models/row_order_model.hpp"
#include "models/row_order_repeat.hpp"

namespace sparsetune::models {

struct RowOrderRows {
  std::string arch;                     // the architecture read
  std::set<std::string> devices;        // that measured the orders
  std::vector<RowOrderRecord> records;  // with the full feature vector, by (fingerprint, N)
  // Per record, its times in each collection apart: an order's k-th row in the database is
  // counted as collection k's (merged collections keep their rows in order).
  std::vector<CollectionTimes> collections;
};

// The candidate rule a row-order measurement's params hold for its order: the rule's name for a
// Hamming order ("matrix" where the row was written before the rule was recorded), "" for the
// other orders and for params of no known order (or not an object, or fields of other types).
std::string hamming_rule(const nlohmann::json& params);

// Only `arch`'s rows ("": the one architecture of the row-order rows; several are an error). A time
// measured more than once (several collections merged) is the geometric mean of its measurements:
// keeping the fastest would keep the luckiest draw of the timing noise, which is as large as most
// orders' gains. The Hamming orders are read from the rows of `candidates`' rule alone (a row
// without the rule took the matrix's order); the other orders, which no rule changes, from every
// row. Throws Error naming `source` on a row whose params are not a JSON object or hold a field of
// the wrong type, and when Hamming orders were timed but none under `candidates`.
RowOrderRows read_row_order_rows(
    const db::TuningDb& db, const std::string& arch, const std::string& source,
    row_orders::Candidates candidates = row_orders::Candidates::shared_lines);

}  // namespace sparsetune::models
