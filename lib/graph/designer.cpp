#include "graph/designer.hpp"

#include <algorithm>

#include "core/fingerprint.hpp"
#include "graph/half.hpp"
#include "graph/interpreter.hpp"
#include "graph/registry.hpp"

namespace sparsetune::graph {

namespace {

void run_ops(const std::vector<OpNode>& ops, Part part, std::vector<Part>& leaves) {
  for (const auto& n : ops) {
    const Operator* op = find_operator(n.op);
    if (!op) throw GraphError("unknown operator " + n.op);
    if (!op->reads_rows_in_place()) copy_out_rows(part);
    auto made = op->apply(part, n.params);
    if (op->branches(n.params) > 0) {
      for (std::size_t b = 0; b < made.size(); ++b)
        run_ops(n.branches[b], std::move(made[b]), leaves);
      return;
    }
  }
  copy_out_rows(part);
  leaves.push_back(std::move(part));
}

// Threads of a parent that no operator cut: `t` strided threads (coalesced, like CSR-vector).
void imply_threads(Part& p) {
  const int pl = defined_parent(p, Level::BMT);
  const std::int64_t t = pl == static_cast<int>(Level::BMW) ? 32 : p.threads;
  const auto spans = parent_spans(p, Level::BMT);
  std::size_t count = 0;
  for (const auto& sp : spans) count += static_cast<std::size_t>(std::min(t, sp.end - sp.begin));
  std::vector<Block> out;
  out.reserve(count);
  for (std::size_t s = 0; s < spans.size(); ++s) {
    const std::int64_t n = spans[s].end - spans[s].begin;
    const std::int64_t k = std::min(t, n);
    for (std::int64_t j = 0; j < k; ++j) {
      Block b;
      b.first = b.begin = spans[s].begin + j;
      b.stride = k;
      b.size = (n - j + k - 1) / k;
      b.end = b.first + (b.size - 1) * k + 1;
      b.parent = static_cast<std::int64_t>(s);
      for (std::int64_t q = 0; q < b.size; ++q) cover_row(b, p.nz[b.first + q * k].row);
      out.push_back(b);
    }
  }
  p.blocks[2] = std::move(out);
  p.bmt_strided = true;
}

// Groups consecutive children of the same parent into blocks of `per`.
void imply_groups(Part& p, int level, std::int64_t per) {
  auto& children = p.blocks[level + 1];
  std::vector<Block> out;
  for (std::size_t i = 0; i < children.size();) {
    std::size_t j = i;
    while (j < children.size() && children[j].parent == children[i].parent &&
           static_cast<std::int64_t>(j - i) < per)
      ++j;
    Block b;
    b.parent = children[i].parent;
    for (std::size_t q = i; q < j; ++q) children[q].parent = static_cast<std::int64_t>(out.size());
    out.push_back(b);
    i = j;
  }
  p.blocks[level] = std::move(out);
}

// Completes the three levels and the rows each block covers.
void finish(Part& p) {
  if (!p.defined[2]) imply_threads(p);
  if (!p.defined[1]) imply_groups(p, 1, 32);
  if (!p.defined[0]) imply_groups(p, 0, p.threads / 32);
  for (int l = 1; l >= 0; --l)
    for (const auto& c : p.blocks[l + 1]) {
      auto& b = p.blocks[l][c.parent];
      if (c.row_lo >= 0) cover_row(b, c.row_lo), cover_row(b, c.row_hi);
    }
}

template <class T>
void check_fit(std::int64_t v, int bits, const char* what) {
  if (bits == 32 && (v > 2147483647 || v < -2147483648LL))
    throw Error(std::string(what) + " " + std::to_string(v) + " does not fit 32-bit indices");
}

FormatArray int_array(std::vector<std::int64_t> v, int bits) {
  FormatArray a;
  a.length = static_cast<std::int64_t>(v.size());
  for (auto x : v) check_fit<int>(x, bits, "index");
  a.dtype = bits == 32 ? "I32" : "I64";
  a.ints = std::move(v);
  return a;
}

// The row a thread's running sum starts at: its lowest row, or where its entries are in column
// order (BMTB_COL_SORT) the row of its first entry, which then needs no step of its own.
std::int64_t first_row(const Part& p, const Block& b) {
  return p.col_sorted && b.size > 0 ? p.nz[b.first].row : b.row_lo;
}

// Builds the part's format; frees the part's blocks and entries as soon as no array left to build
// reads them (the part is not used afterwards).
PartFormat part_format(Part& p, const Format& f, std::size_t index) {
  PartFormat out;
  out.path = p.path;
  // SpTV runs SpMV kernels on the tensor's matrix view; SpMM's take B and C.
  out.kernel = (f.op == "spmm" ? "sparsetune_spmm_p" : "sparsetune_spmv_p") + std::to_string(index);
  out.rows = p.rows();
  out.nnz_stored = static_cast<std::int64_t>(p.nz.size());
  out.pad_entries = p.pad_entries;
  out.n_bmtb = static_cast<std::int64_t>(p.blocks[0].size());
  out.n_bmw = static_cast<std::int64_t>(p.blocks[1].size());
  out.n_bmt = static_cast<std::int64_t>(p.blocks[2].size());
  out.threads = p.threads;
  out.col_tile = p.col_tile;
  out.col_vec = p.col_vec;
  out.col_lanes = p.col_lanes;
  out.grid = std::min(out.n_bmtb, p.max_blocks);
  out.reductions = p.reductions;
  out.thread_loads = p.thread_loads;
  if (auto it = p.built.find(Arr::tc_ptr); it != p.built.end()) {
    out.n_tc = static_cast<std::int64_t>(it->second.size()) - 1;
    out.tc_w = p.tc_width;
  }
  out.atomic =
      std::find(p.reductions.begin(), p.reductions.end(), "GMEM_ATOM_RED") != p.reductions.end();

  // The arrays: the skeleton's, then those each fragment reads.
  std::vector<Arr> reads = {Arr::bmtb_first_bmw, Arr::bmw_first_bmt, Arr::origin_row};
  for (const auto& r : p.reductions)
    for (Arr a : find_reduction(r)->reads(p)) reads.push_back(a);
  std::vector<Arr> order;  // first reads only
  for (Arr a : reads)
    if (std::find(order.begin(), order.end(), a) == order.end()) order.push_back(a);
  const auto reads_nz = [](Arr a) {
    return a == Arr::nz_col || a == Arr::nz_val || a == Arr::nz_row_delta;
  };
  const auto reads_blocks = [](Arr a) {
    return a != Arr::nz_col && a != Arr::nz_val && a != Arr::origin_row;
  };
  std::size_t last_nz = 0, last_blocks = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (reads_nz(order[k])) last_nz = k;
    if (reads_blocks(order[k])) last_blocks = k;
  }
  const int bits = f.index_bits;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const Arr a = order[k];
    const std::string name = arr_name(a);
    std::vector<std::int64_t> v;
    switch (a) {
      case Arr::bmt_first_nz:
      case Arr::bmt_stride:
      case Arr::bmt_size:
      case Arr::bmt_row:
        v.reserve(p.blocks[2].size());
        break;
      case Arr::bmw_row:
        v.reserve(p.blocks[1].size());
        break;
      case Arr::bmtb_row:
      case Arr::bmtb_rows:
        v.reserve(p.blocks[0].size());
        break;
      case Arr::nz_col:
        v.reserve(p.nz.size());
        break;
      default:
        break;
    }
    switch (a) {
      case Arr::bmtb_first_bmw:
      case Arr::bmw_first_bmt: {
        const int child = a == Arr::bmtb_first_bmw ? 1 : 2;
        v.assign(p.blocks[child - 1].size() + 1, 0);
        for (const auto& c : p.blocks[child]) ++v[c.parent + 1];
        for (std::size_t i = 1; i < v.size(); ++i) v[i] += v[i - 1];
        break;
      }
      case Arr::bmt_first_nz:
        for (const auto& b : p.blocks[2]) v.push_back(b.first);
        break;
      case Arr::bmt_stride:
        for (const auto& b : p.blocks[2]) v.push_back(b.stride);
        break;
      case Arr::bmt_size:
        for (const auto& b : p.blocks[2]) v.push_back(b.size);
        break;
      case Arr::bmt_row:
        for (const auto& b : p.blocks[2]) v.push_back(first_row(p, b));
        break;
      case Arr::bmw_row:
        for (const auto& b : p.blocks[1]) v.push_back(b.row_lo);
        break;
      case Arr::bmtb_row:
        for (const auto& b : p.blocks[0]) v.push_back(b.row_lo);
        break;
      case Arr::bmtb_rows:
        for (const auto& b : p.blocks[0]) v.push_back(b.row_lo < 0 ? 0 : b.row_hi - b.row_lo + 1);
        break;
      case Arr::nz_col:
        for (const auto& e : p.nz) v.push_back(e.col);
        break;
      case Arr::nz_row_delta:
        v.assign(p.nz.size(), 0);
        for (const auto& b : p.blocks[2]) {
          std::int64_t prev = first_row(p, b);
          for (std::int64_t k = 0; k < b.size; ++k) {
            const auto& e = p.nz[b.first + k * b.stride];
            v[b.first + k * b.stride] = e.row - prev;
            prev = e.row;
          }
        }
        break;
      case Arr::origin_row:
        v = std::move(p.origin_row);
        break;
      case Arr::nz_val:
        break;
      default:  // an array an operator built whole (TC_COMPRESS)
        if (auto it = p.built.find(a); it != p.built.end()) v = std::move(it->second);
        break;
    }
    if (a == Arr::nz_val) {
      FormatArray fa;
      fa.dtype = value_dtype(f.dtype);
      fa.length = out.nnz_stored;
      fa.reals.reserve(p.nz.size());
      if (f.dtype == "f64") {
        for (const auto& e : p.nz) fa.reals.push_back(e.val);
      } else if (f.dtype == "f32") {
        for (const auto& e : p.nz) fa.reals.push_back(static_cast<float>(e.val));
      } else {
        for (const auto& e : p.nz)
          fa.reals.push_back(half_to_float(float_to_half(static_cast<float>(e.val))));
      }
      out.arrays[name] = std::move(fa);
    } else {
      out.arrays[name] = int_array(std::move(v), bits);
    }
    if (k == last_blocks)
      for (auto& b : p.blocks) std::vector<Block>().swap(b);
    if (k == last_nz) std::vector<Entry>().swap(p.nz);
  }
  if (out.has(Arr::bmtb_rows)) {
    for (auto r : out.array(Arr::bmtb_rows).ints) out.shmem_rows = std::max(out.shmem_rows, r);
  }
  return out;
}

// SpMM keeps a C tile where SpMV keeps one value: block-level reductions hold tn accumulators per
// row or warp in shared memory, which must fit the 48 KiB a kernel may declare statically.
void check_spmm_shared(const Format& f) {
  constexpr std::int64_t kStaticShared = 48 * 1024;
  const std::int64_t acc = f.dtype == "f64" ? 8 : 4;
  for (std::size_t i = 0; i < f.parts.size(); ++i) {
    const auto& p = f.parts[i];
    std::int64_t slots = 0;
    for (const auto& r : p.reductions) {
      if (r == "SHMEM_OFFSET_RED") slots += std::max<std::int64_t>(1, p.shmem_rows);
      if (r == "SHMEM_TOTAL_RED") slots += p.threads / 32;
    }
    const std::int64_t bytes = slots * p.col_tile * acc;
    if (bytes > kStaticShared)
      throw DesignError("part " + std::to_string(i) +
                        (p.path.empty() ? "" : " (branch " + p.path + ")") +
                        ": rule: its shared C tiles need " + std::to_string(bytes) +
                        " bytes (tn = " + std::to_string(p.col_tile) + "), more than 48 KiB");
  }
}

}  // namespace

MetadataSet apply_graph(const Graph& g, const Csr64& a, double max_padding,
                        std::shared_ptr<const RowSlices> slices) {
  if (slices && static_cast<std::int64_t>(slices->of_row.size()) != a.rows)
    throw Error("design: the slice table has " + std::to_string(slices->of_row.size()) +
                " rows, the matrix " + std::to_string(a.rows));
  Part root;
  root.cols = a.cols;
  root.slices = std::move(slices);
  root.max_stored = static_cast<std::int64_t>(
      std::min(9.0e18, max_padding * static_cast<double>(std::max(a.nnz(), a.rows)) + 65536.0));
  root.origin_row.resize(a.rows);
  root.in = &a;  // the rows stay in `a` until an operator needs them copied out
  root.in_lo.resize(a.rows);
  root.in_hi.resize(a.rows);
  for (std::int64_t r = 0; r < a.rows; ++r)
    root.origin_row[r] = r, root.in_lo[r] = a.row_ptr[r], root.in_hi[r] = a.row_ptr[r + 1];
  MetadataSet m;
  m.rows = a.rows;
  m.cols = a.cols;
  m.nnz = a.nnz();
  run_ops(g.ops, std::move(root), m.parts);
  for (auto& p : m.parts) finish(p);
  return m;
}

Format design(Graph g, const Csr64& a, const DesignOptions& opt) {
  validate(g, g.name.empty() ? "graph" : "graph " + g.name);
  Format f;
  f.rows = a.rows;
  f.cols = a.cols;
  f.nnz = a.nnz();
  f.dtype = opt.dtype;
  value_dtype(f.dtype);
  if (opt.index_bits != 0 && opt.index_bits != 32 && opt.index_bits != 64)
    throw Error("index bits must be 32 or 64");
  MetadataSet m = apply_graph(g, a, opt.max_padding, opt.slices);
  f.op = g.op;
  std::int64_t largest = std::max(a.rows, a.cols);
  for (const auto& p : m.parts) largest = std::max<std::int64_t>(largest, p.nz.size());
  f.index_bits = opt.index_bits ? opt.index_bits : (largest < (std::int64_t{1} << 31) ? 32 : 64);
  f.fingerprint = fingerprint(a);
  f.graph = graph_to_json(g);
  for (std::size_t i = 0; i < m.parts.size(); ++i) {
    for (const auto& r : m.parts[i].reductions) {
      const auto* red = find_reduction(r);
      if (red->only_dtype() && f.dtype != red->only_dtype())
        throw DesignError(r + ": rule: serves " + red->only_dtype() + " formats, not " + f.dtype);
      red->check(m.parts[i]);
    }
    f.parts.push_back(part_format(m.parts[i], f, i));
    m.parts[i] = Part{};  // the format holds what the kernel reads; the rest is no longer needed
  }
  // Each non-atomic part writes a row at most once; over all parts, a format whose every row is
  // written exactly once stores into y (no zeroing, no read-modify-write).
  std::vector<std::int64_t> total(f.rows, 0);
  bool any_atomic = false;
  int covering = -1;  // the first non-atomic part that writes every row exactly once
  for (std::size_t i = 0; i < f.parts.size(); ++i) {
    if (f.parts[i].atomic) {
      any_atomic = true;
      continue;
    }
    const auto writes = count_writes(f, i);
    if (covering < 0 &&
        std::all_of(writes.begin(), writes.end(), [](std::int64_t k) { return k == 1; }))
      covering = static_cast<int>(i);
    for (std::int64_t r = 0; r < f.rows; ++r) {
      total[r] += writes[r];
      if (writes[r] > 1)
        throw DesignError("part " + std::to_string(i) +
                          (f.parts[i].path.empty() ? "" : " (branch " + f.parts[i].path + ")") +
                          ": rule: without GMEM_ATOM_RED every row is written once, but row " +
                          std::to_string(r) + " is written " + std::to_string(writes[r]) +
                          " times");
    }
  }
  f.store_only =
      !any_atomic && std::all_of(total.begin(), total.end(), [](std::int64_t k) { return k == 1; });
  // SpMV and SpTV parts run one after another, so a part covering every row can store first and
  // the others add after it: no zeroing of y, no pass scaling it by beta. (SpMM parts may run
  // fused, at once. SpTV's pipeline runs a SLICE_DIV branch's parts on one stream, in this order;
  // a part covering every row is then the only branch's.)
  if (!f.store_only && (f.op == "spmv" || f.op == "sptv") && f.parts.size() > 1 && covering >= 0)
    f.storing_part = covering;
  if (f.op == "spmm") check_spmm_shared(f);
  return f;
}

}  // namespace sparsetune::graph
