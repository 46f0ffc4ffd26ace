#pragma once
// The loop every `collect` shares (its searches, `--op sptv`, `--row-orders`): items one at a
// time, a progress line with an ETA, one outcome each (done, skipped with why, or failed with why
// and a "collect/failed" row in the database, so the next collect tries it again), stopping at an
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

// What measuring one item did: "done", "skipped" with why, or "interrupted" (the loop ends there
// without an outcome for it, as at a stop before it).
struct ItemDone {
  std::string status = "done", reason;
};

// `one` measures item `index`, setting `fingerprint` (and `n`, the row key of a failure) as soon
// as it knows them; it throws to fail the item, and a NoGpu it throws ends the loop. Progress and
// outcomes name item i by labels[i] (by its name when `labels` is empty).
CollectSummary collect_each(
    std::vector<CollectItem>& items, db::TuningDb& db, const CollectKey& key,
    const std::atomic<bool>* stop, const std::function<void(const CollectProgress&)>& progress,
    const std::function<ItemDone(int index, CollectItem&, std::string& fingerprint,
                                 std::int64_t& n)>& one,
    const std::vector<std::string>& labels = {});

}  // namespace sparsetune::search
