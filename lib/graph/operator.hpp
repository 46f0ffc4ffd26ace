#pragma once
// An operator is one small unit: a name, a parameter schema, a structural precondition on the
// graph so far, an `apply` that edits the Metadata Set, and (for implementing operators) the
// fragment it contributes with the arrays that fragment reads and a CPU model of it.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "graph/arrays.hpp"
#include "graph/metadata.hpp"

namespace sparsetune::graph {

enum class Stage { Converting = 0, Mapping = 1, Implementing = 2 };
const char* stage_name(Stage s);

enum class ParamType { Int, Bool, Number, IntList };

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::Int;
  nlohmann::json fallback;  // null: required
  double min = 0, max = 0;  // inclusive bounds for Int, Number and IntList items
  std::string doc;
  // Left out of a graph while at its default (a parameter added after graphs were written, so
  // they read, print and hash as before); the operator reads it as `fallback` when absent.
  bool implicit = false;
};

// An invalid graph: names the operator, where it is, and the rule it breaks.
class GraphError : public Error {
 public:
  using Error::Error;
};

// A graph that is valid in structure but cannot be applied to this matrix (a data rule).
class DesignError : public Error {
 public:
  using Error::Error;
};

// What a walk over a graph has established so far; preconditions read it, `advance` updates it.
struct GraphState {
  std::string op = "spmv";  // the graph's operation: an operator may serve only some
  bool compressed = false;
  bool col_tiled = false;  // COL_TILE seen (SpMM: every part needs one)
  int col_lanes = 1;       // COL_TILE's lanes: lanes sharing each thread block's entries
  std::array<bool, kLevels> blocked{false, false, false};
  std::array<bool, kLevels> padded{false, false, false};
  int finest = -1;           // finest level blocked so far
  std::string bmtb_kind;     // "ROW", "COL" or "NNZ" once BMTB is blocked
  bool bmt_strided = false;  // thread blocks interleaved by BMT_NNZ_BLOCK or BMT_PAD
  bool resources = false;
  int last_reduction = -1;  // RedLevel of the last implementing operator
  std::vector<std::string> reductions;
  int tc_width = 0;         // TC_COMPRESS's TC block width: the part is stored for tensor cores
  bool col_sorted = false;  // BMTB_COL_SORT seen: a BMTB's entries are in column order
};

class Operator {
 public:
  virtual ~Operator() = default;
  virtual const char* name() const = 0;
  virtual Stage stage() const = 0;
  virtual const char* summary() const = 0;
  virtual std::vector<ParamSpec> params() const { return {}; }
  // The ops this operator serves; most serve every op (a tensor's view and SpMM's A are matrices).
  virtual std::vector<std::string> ops() const { return {"spmv", "sptv", "spmm"}; }
  bool serves(const std::string& op) const;
  // What the graph so far breaks by placing this operator next: the op it does not serve, then
  // precondition(); "" when it may follow. Validation, random graphs and the search all ask this.
  std::string rule(const GraphState& s, const nlohmann::json& p) const;
  // The rule this operator breaks when placed after the graph so far; "" when it may follow.
  virtual std::string precondition(const GraphState& s, const nlohmann::json& p) const = 0;
  virtual void advance(GraphState& s, const nlohmann::json& p) const = 0;
  // Parts a dividing operator makes (each continues with a sub-graph of its own); 0 otherwise.
  virtual int branches(const nlohmann::json& p) const { return 0; }
  // Whether apply() takes rows read in place from the matrix (Part::in), besides row_entries.
  virtual bool reads_rows_in_place() const { return false; }
  // Edits the part; a dividing operator returns the parts it makes (the input is consumed).
  virtual std::vector<Part> apply(Part& part, const nlohmann::json& p) const = 0;
};

// ---- implementing operators -------------------------------------------------------------

// Reduction levels: thread registers, warp shuffles, shared memory, global memory.
enum class RedLevel { Thread = 0, Warp = 1, Block = 2, Global = 3 };

// An intermediate result: a local row (-1: none) and its partial sum.
struct Pair {
  std::int64_t row = -1;
  double v = 0.0;
};

// Where a result goes next: `tid` is the thread (within the CUDA block) that holds it.
using Emit = std::function<void(int tid, std::int64_t row, double v)>;

// Position of the executing unit, as the kernel's loop variables give it.
struct Cursor {
  std::int64_t bmtb = 0, bmw = 0, bmt = 0;
  bool w_active = false, t_active = false;
  int warp = 0, lane = 0, threads = 0;
  int lanes = 1;  // SpMM (COL_TILE lanes): lanes of a group sharing each thread block
};

// Read access to a designed format, used by the CPU models exactly as fragments read arrays.
class FormatReader {
 public:
  virtual ~FormatReader() = default;
  virtual std::int64_t at(Arr a, std::int64_t i) const = 0;
  virtual bool has(Arr a) const = 0;              // whether the part holds the array
  virtual double val(std::int64_t nz) const = 0;  // in the storage precision
  virtual double x(std::int64_t col) const = 0;   // in the storage precision
};

// CPU model of one reduction fragment; a fresh one per part and run.
class ReductionModel {
 public:
  virtual ~ReductionModel() = default;
  virtual void begin_bmtb(const FormatReader&, const Cursor&) {}
  // Thread level: the thread's result; `side` takes results flushed on the way.
  virtual Pair thread(const FormatReader&, const Cursor&, const Emit& side) { return {}; }
  // Warp level: one round of 32 lanes, collective.
  virtual void round(const FormatReader&, const Cursor&, std::array<Pair, 32>& lanes,
                     const Emit& out) {}
  // Block and global level: one result from thread `tid`.
  virtual void accept(const FormatReader&, const Cursor&, int tid, std::int64_t row, double v,
                      const Emit& out) {}
  virtual void end_bmw(const FormatReader&, const Cursor&, const Emit& out) {}
  virtual void end_bmtb(const FormatReader&, const Cursor&, const Emit& out) {}
};

class ReductionOperator : public Operator {
 public:
  Stage stage() const override { return Stage::Implementing; }
  virtual RedLevel level() const = 0;
  virtual std::vector<Arr> reads() const = 0;  // arrays the fragment reads
  // The arrays it reads from this part (a tensor-core operator reads its part's encoding).
  virtual std::vector<Arr> reads(const Part&) const { return reads(); }
  // Tensor-core operators: the width of the TC blocks they multiply (TC_COMPRESS's); 0 others.
  virtual int tc_width() const { return 0; }
  // The only format dtype it serves (fp16 tensor cores take fp16 values and x); null: any.
  virtual const char* only_dtype() const { return nullptr; }
  // Whether it serves SpMM parts whose lanes walk thread blocks in groups (COL_TILE lanes > 1):
  // thread- and global-level ones do; a collective one only when its fragment has `*_lanes`
  // sections and its model reads Cursor::lanes.
  virtual bool serves_lane_groups() const {
    return level() == RedLevel::Thread || level() == RedLevel::Global;
  }
  // Whether it takes a thread block's entries in any row order (after BMTB_COL_SORT): it follows
  // each entry's row, or holds one row by a data rule, instead of pairing neighbours' rows.
  virtual bool takes_any_row_order() const { return false; }
  virtual const char* fragment() const = 0;  // file stem in templates/
  virtual std::unique_ptr<ReductionModel> model() const = 0;
  virtual void check(const Part& part) const {}  // data rules; throws DesignError

  std::string precondition(const GraphState& s, const nlohmann::json& p) const override;
  void advance(GraphState& s, const nlohmann::json& p) const override;
  std::vector<Part> apply(Part& part, const nlohmann::json& p) const override;
};

// Throws DesignError unless every block of level `l` covers at most one row.
void require_one_row(const Part& part, Level l, const char* op);

}  // namespace sparsetune::graph
