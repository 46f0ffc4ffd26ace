#pragma once
// The loop `collect --op sptv` and `collect --row-orders` share: items one at a time, a progress
// line with an ETA, one outcome each (done, skipped with why, or failed with why and a
// "collect/failed" row in the database, so the next collect tries it again), stopping at an
// interrupt.
#include <atomic>
#include <functional>
#include <string>

#include "db/tuning_db.hpp"
#include "search/collect.hpp"

namespace sparsetune::search {

struct CollectKey {
  std::string op, dtype, device, arch;
};

// A database row of this key for one item (fingerprint, n), tool version set; the caller adds
// the candidate, params and result.
db::Measurement key_row(const CollectKey& key, const std::string& fingerprint, std::int64_t n);
// The run that marks (fingerprint, n) measured, so the next collect skips it.
db::Run key_run(const CollectKey& key, const std::string& fingerprint, std::int64_t n,
                const std::string& family, std::int64_t candidates, double seconds);

// What measuring one item did: "done", or "skipped" with why.
struct ItemDone {
  std::string status = "done", reason;
};

// `one` measures an item, setting `fingerprint` (and `n`, the row key of a failure) as soon as
// it knows them; it throws to fail the item. Exceptions of type `Fatal` end the loop.
CollectSummary collect_each(
    std::vector<CollectItem>& items, db::TuningDb& db, const CollectKey& key,
    const std::atomic<bool>* stop, const std::function<void(const CollectProgress&)>& progress,
    const std::function<ItemDone(CollectItem&, std::string& fingerprint, std::int64_t& n)>& one);

}  // namespace sparsetune::search
