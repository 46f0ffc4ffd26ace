#pragma once
// `collect`: measures a corpus into the tuning database, one matrix at a time, by running `tune`
// on each (SpMM: once per n of B's column counts, each a search of its own) (in a child process of
// the same program, under a per-matrix time limit, so a hang or a crash costs one matrix).
// Resumable: a matrix whose search completed for this key (the runs table: fingerprint, op, value
// type, device) is skipped. A matrix that fails is recorded with its reason (a failed row
// "collect/failed" in the database, and the summary) and the run goes on.
//
// The list has one matrix a line, `#` comments:
//   PATH [FAMILY]                              a matrix file (relative to the list's folder)
//   gen KIND [param=value ...] [seed=S] [family=F]   a generated matrix (lib/gen)
// A generated matrix is written once to the generated-matrices folder; its family (default
// "gen:KIND") and its parameters (in its name, e.g. kron_scale=12_seed=1) are its provenance.
// A folder stands for every .mtx, .mtx.gz and .safetensors file in it; a matrix file for itself.
#include <atomic>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gen/generate.hpp"

namespace sparsetune::search {

struct CollectItem {
  std::string source;  // LIST:LINE, or the folder's file
  std::string path;    // the matrix file ("" until a generated one is written)
  std::string name, family;
  std::optional<gen::GenSpec> gen;
};

// Parses a list file or lists a folder; every error names LIST:LINE. Names must be unique.
std::vector<CollectItem> read_collect_list(const std::string& list_or_dir);

// Keeps the items of shard `spec` ("I/N": every N-th item from the I-th, 0 <= I < N), so that N
// commands, one per GPU, collect one list between them; throws Error naming `spec` when it is not
// of that form.
std::vector<CollectItem> shard_of(std::vector<CollectItem> items, const std::string& spec);

// Writes a generated item's matrix into `gen_dir` once and sets its path (an existing file of
// that name is the same matrix: the generators are deterministic); a file item is left as it is.
// Errors name the item's LIST:LINE.
void materialize(CollectItem& it, const std::string& gen_dir);

struct CollectProgress {
  int index = 0, total = 0;  // the matrix now starting (0-based) of how many
  std::string name;
  int done = 0, skipped = 0, failed = 0;
  double elapsed_s = 0;
  double eta_s = -1;  // -1: unknown yet (no matrix measured)
};

struct ItemOutcome {
  std::string name, status;  // done | skipped | failed
  std::string reason;        // why it failed (or was skipped)
  double seconds = 0;
};

struct CollectOptions {
  std::string db_path;      // "": TuningDb::default_path()
  std::string op = "spmv";  // spmv | spmm
  std::vector<int> ns;      // spmm: B's column counts, each its own search (empty: 32 and 128)
  std::string dtype = "f64";
  double budget_s = 60;             // tune's budget per matrix
  double per_matrix_timeout_s = 0;  // 0: 3 x budget + 60
  double crux_share = 0;            // SpMV: tune's --crux-share (0: tune's default)
  bool compile_only = false;        // no GPU: tune --compile-only (the search's CPU side)
  // A (matrix, n) whose search --budget starves (the final steps leave it no time) is tuned once
  // more with the budget tune asks for, within --per-matrix-timeout when one is given.
  bool grow_budget = false;
  std::string gen_dir;   // generated matrices ("": <db folder>/generated)
  std::string work_dir;  // tune's output folders and logs ("": a temporary folder)
  std::string program = "/proc/self/exe";  // the sparsetune executable run per matrix
  const std::atomic<bool>* stop = nullptr;
  std::function<void(const CollectProgress&)> progress;
  // For tests: runs one matrix (at one n; 1 for SpMV) instead of a child `tune` (throws Error to
  // fail it).
  std::function<void(const CollectItem&, const CollectOptions&, int n)> run_one;
};

struct CollectSummary {
  std::vector<ItemOutcome> items;
  int done = 0, skipped = 0, failed = 0;
  bool interrupted = false;
  std::string device;
  double seconds = 0;
  nlohmann::json to_json() const;
};

// Why a tune recorded no completed search, from its --json report (the search's note: a budget
// that left the search no time); "" when the file says nothing of it.
std::string why_no_search(const std::string& tune_json);

// The budget a starved tune asks for (its --json report's search.budget_needed_s); 0 when the
// file gives none.
double budget_needed(const std::string& tune_json);

// "[ 12/57]  21 %  NAME  done 9, skipped 2, failed 1  elapsed 3m10s  ETA 11m40s", at most
// `width` characters.
std::string render_progress(const CollectProgress& p, int width = 100);

// Throws Error before anything runs when there is no GPU (unless compile_only or run_one).
CollectSummary collect(const std::vector<CollectItem>& items, const CollectOptions& o);

}  // namespace sparsetune::search
