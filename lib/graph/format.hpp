#pragma once
// The Format: exactly the named arrays a part's kernel reads, each either stored (with the
// narrowest integer type that holds it) or replaced by a formula the kernel computes, plus the
// launch configuration. Serialized as safetensors (see docs/format-binary.md).
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "graph/arrays.hpp"
#include "io/safetensors.hpp"

namespace sparsetune::graph {

// An index array as a function of its position (AlphaSparse's model-driven compression):
//   constant  v = a                 linear    v = a*i + b
//   step      v = a*(i/p) + b       periodic  v = a*(i%p) + b*(i/p) + c
//   table     v = min(max(a*(i%p) + table[i/p], b), c)   (one offset per period, clamped:
//             the column array of diagonals stored slot by slot, column-major)
// with a short list of exceptions that the formula misses. `derived` arrays (the addressing of
// implied threads) follow from their parent's arrays; see derive_implied_threads(). A `packed`
// nz_row_delta lives in the bits of nz_col's stored words above bit `a` (the column's width):
// word = col | delta << a, so a segmented COO entry carries its row step at no byte of its own.
// Most offsets a table model keeps (they become a constant array in the kernel).
inline constexpr std::size_t kMaxModelTable = 1024;

struct ArrayModel {
  enum class Kind { Stored, Constant, Linear, Step, Periodic, Derived, Table, Packed };
  Kind kind = Kind::Stored;
  std::int64_t a = 0, b = 0, c = 0, p = 1;
  std::vector<std::pair<std::int64_t, std::int64_t>> exceptions;  // (index, value), ascending
  std::vector<std::int64_t> table;  // Table: the offset of each period

  std::int64_t formula(std::int64_t i) const;
  std::int64_t eval(std::int64_t i) const;  // the formula, or the exception at i
};
const char* model_kind_name(ArrayModel::Kind k);

struct FormatArray {
  std::string dtype;  // storage type: I8, I16, I32, I64 for indices; F16, F32, F64 for nz_val
  std::int64_t length = 0;
  std::vector<std::int64_t> ints;  // the values (kept even when a model replaces them)
  std::vector<double> reals;       // nz_val, already rounded to the storage precision
  ArrayModel model;
  // The values the formula cannot give: a stored array's, a derived one's, a packed one's.
  bool held() const {
    return model.kind == ArrayModel::Kind::Stored || model.kind == ArrayModel::Kind::Derived ||
           model.kind == ArrayModel::Kind::Packed;
  }
  bool stored() const { return model.kind == ArrayModel::Kind::Stored; }
};

struct PartFormat {
  std::string path;    // branch of the graph this part comes from
  std::string kernel;  // kernel function name
  std::int64_t rows = 0, nnz_stored = 0, pad_entries = 0;
  std::int64_t n_bmtb = 0, n_bmw = 0, n_bmt = 0;
  std::int64_t n_tc = 0;  // TC blocks of a dense unfolding (TC_COMPRESS), tc_w columns each
  int tc_w = 0;
  int threads = 128;
  int col_tile = 1, col_vec = 1;  // SpMM (COL_TILE): columns per thread, B load width
  // SpMM (COL_TILE lanes): lanes of a group walking the same thread blocks, each on its own tile
  // of col_tile columns; a CUDA block covers col_span() columns of C (grid y walks them).
  int col_lanes = 1;
  int col_span() const { return col_tile * col_lanes; }
  std::int64_t grid = 0;        // 0: nothing to launch (the x dimension; SpMM's y: tiles)
  std::int64_t shmem_rows = 0;  // shared accumulators per block (SHMEM_OFFSET_RED)
  std::vector<std::string> reductions;
  int thread_loads = 1;  // entries a thread loads together before summing them (THREAD_*_RED)
  bool atomic = false;   // results reach y through atomics
  // Loops the Optimizer found to run at most once (their code becomes a plain `if`).
  bool single_bmtb_round = false, single_warp_round = false, single_thread_round = false;
  // Threads no operator cut, strided over their parent: 0 none derived, 1 the warp block
  // (bmw_first_nz), 2 the thread block (bmtb_first_nz). Their first entry, stride and size (and
  // row, when it is the parent's) are then computed in the kernel, not stored.
  int implied_threads = 0;
  std::map<std::string, FormatArray> arrays;

  bool has(Arr a) const { return arrays.count(arr_name(a)) != 0; }
  const FormatArray& array(Arr a) const;
};

// SpTV (op "sptv"): the tensor behind the matrix view and HTF's slice table (IAP-SpTV §3.1):
// sliceIdx, sliceNnz and the format of each non-empty slice (0 CSR, 1 COO, 2 ELL, 3 HYB, 4 Dense).
// Kernels do not read it (origin_row routes every fiber); it is stored for the user and checks.
struct SptvSlices {
  std::vector<std::int64_t> dims;  // the tensor's mode sizes
  int mode = -1, slice_mode = -1;
  // The modes that order y's entries (core/sptv_matrix.hpp's sptv_output_order). Binaries
  // without it are ordered lexicographically by the remaining modes.
  std::vector<int> y_order;
  std::vector<std::int64_t> slice_idx, slice_nnz, slice_format;
};

struct Format {
  std::string op = "spmv";
  std::int64_t rows = 0, cols = 0, nnz = 0;
  std::string dtype = "f64";  // f64, f32 or f16 (fp16 values, fp32 accumulation)
  int index_bits = 32;        // width of stored indices before narrowing
  std::string fingerprint;
  nlohmann::json graph;
  std::vector<PartFormat> parts;
  // Every row of y is written exactly once by exactly one unit over all parts (no atomics, no
  // row shared, none left out): the kernels store into y instead of adding, and y needs no
  // zeroing. Decided by the Designer; writes_each_row_once() (interpreter.hpp) checks it.
  bool store_only = false;
  // An adding SpMV format whose part `storing_part` alone writes every row of y exactly once
  // (no atomics): that part runs first and stores alpha v + beta y, the other parts then add
  // alpha v, so y needs neither zeroing nor a pass scaling it by beta. -1: none (the parts add
  // into a y zeroed or scaled first). Decided by the Designer; never set with store_only.
  int storing_part = -1;
  // The parts' kernels need y zeroed, or scaled by beta, before they run.
  bool scales_output_first() const { return !store_only && storing_part < 0; }
  // Whether part i stores into y (store-only formats, the storing part) rather than adds.
  bool part_stores(std::size_t i) const {
    return store_only || (storing_part >= 0 && static_cast<std::size_t>(storing_part) == i);
  }
  // The order the parts' kernels run in: the storing part first, then the others by index.
  std::vector<std::size_t> launch_order() const;
  SptvSlices sptv;  // op "sptv" only
  // SpMM: how the caller's dense B and C are laid out, chosen when the kernels are emitted (not a
  // design choice: A's arrays do not depend on it, the kernels' addressing does). "row":
  // B(i, j) = B[i * ldb + j] (the default); "col": B(i, j) = B[i + j * ldb], C likewise with ldc.
  // Recorded in the format binary's metadata only when "col", so row-major binaries are unchanged.
  std::string layout = "row";
  bool col_major() const { return layout == "col"; }
};

// Checks an SpMM layout name ("row" or "col", the latter for op spmm only); throws Error.
void check_layout(const std::string& layout, const std::string& op);

// Fills the values of the part's derived arrays from the parent's arrays, exactly as the kernel
// computes them; throws Error when those arrays are inconsistent.
void derive_implied_threads(PartFormat& p);

// "F64", "F32" or "F16" for a format dtype; throws Error for others.
std::string value_dtype(const std::string& dtype);
// Smallest of I8/I16/I32/I64 holding [lo, hi], never wider than `bits`.
std::string int_dtype_for(std::int64_t lo, std::int64_t hi, int bits);

nlohmann::json format_description(const Format& f);  // everything but the array data
io::SafetensorsFile to_safetensors(const Format& f, const std::string& tool_version);
// Checks every field, length and model; `source` names the file in errors.
Format from_safetensors(const io::SafetensorsFile& s, const std::string& source);

// The SpTV slice table as safetensors arrays (htf.*) and metadata ("sptv"), appended after the
// parts' arrays; and its reading with every length, range and order checked.
void pack_sptv(const Format& f, io::SafetensorsFile& s);
void unpack_sptv(const io::SafetensorsFile& s, Format& f, const std::string& source);

// Writes through a temporary file in the same folder, then renames.
void write_format(const std::string& path, const Format& f, const std::string& tool_version);
Format read_format(const std::string& path);

// Bytes of the stored arrays (what a kernel streams at most once per run).
std::int64_t stored_bytes(const Format& f);

// Packs a part's stored nz_row_delta into the spare high bits of its stored nz_col (model
// `packed`) when both fit one word of nz_col's type (16 or 32 bits): a segmented COO entry then
// costs its column and value only. Returns whether it did; the arrays' values are unchanged.
bool pack_row_delta(PartFormat& p);
// Whether nz_col's stored words hold more than the column: a packed nz_row_delta above its bits
// (pack_row_delta), or its bits 16-23 in nz_col_hi (split_col_words).
bool col_words_hold_more(const PartFormat& p);
// The bits of nz_col's stored words: 24 when the part splits them (nz_col_hi), else those of a
// 16- or 32-bit integer type (0 for other types).
int col_word_bits(const PartFormat& p);
// Stores a part's 32-bit nz_col words (columns, with a packed nz_row_delta above them) as 24-bit
// words when every word fits: nz_col keeps the low 16 bits, a new stored array nz_col_hi (I8)
// the bits 16-23. 3 bytes an entry instead of 4 where the pipeline of SpTV is bound by the bytes
// it sends. Returns whether it did; nz_col's values are unchanged.
bool split_col_words(PartFormat& p);

}  // namespace sparsetune::graph
