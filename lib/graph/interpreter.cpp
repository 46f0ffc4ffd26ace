#include "graph/interpreter.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <limits>
#include <memory>
#include <string>

#include "core/error.hpp"
#include "core/parallel_for.hpp"
#include "graph/half.hpp"
#include "graph/registry.hpp"

namespace sparsetune::graph {

namespace {

class Reader final : public FormatReader {
 public:
  // `ones`: x is all ones (the write counts): x() reads no memory.
  Reader(const Format& f, const PartFormat& p, const std::vector<double>& x, bool ones = false)
      : x_(x), cols_(f.cols), ones_(ones) {
    for (int i = 0; i < kArrays; ++i) {
      auto it = p.arrays.find(arr_name(static_cast<Arr>(i)));
      arrays_[i] = it == p.arrays.end() ? nullptr : &it->second;
    }
    if (ones_) return;
    xs_.resize(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
      xs_[i] = f.dtype == "f64"   ? x[i]
               : f.dtype == "f32" ? static_cast<double>(static_cast<float>(x[i]))
                                  : half_to_float(float_to_half(static_cast<float>(x[i])));
  }
  std::int64_t at(Arr a, std::int64_t i) const override {
    const FormatArray* fa = arrays_[static_cast<int>(a)];
    if (!fa)
      throw Error(std::string("format: a fragment reads ") + arr_name(a) +
                  ", which the part lacks");
    if (i < 0 || i >= fa->length)
      throw Error(std::string("format: ") + arr_name(a) + "[" + std::to_string(i) +
                  "] is out of range");
    // Derived arrays hold the values derive_implied_threads() computes the kernel's way, packed
    // ones those unpacked from their host's words.
    return fa->held() ? fa->ints[i] : fa->model.eval(i);
  }
  bool has(Arr a) const override { return arrays_[static_cast<int>(a)] != nullptr; }
  double val(std::int64_t nz) const override {
    const FormatArray* fa = arrays_[static_cast<int>(Arr::nz_val)];
    if (!fa || nz < 0 || nz >= fa->length)
      throw Error("format: nz_val[" + std::to_string(nz) + "] is out of range");
    return fa->reals[nz];
  }
  double x(std::int64_t col) const override {
    if (col < 0 || col >= cols_)
      throw Error("format: column " + std::to_string(col) + " is out of range");
    return ones_ ? 1.0 : xs_[col];
  }

 private:
  std::array<const FormatArray*, kArrays> arrays_{};
  const std::vector<double>& x_;
  std::vector<double> xs_;
  std::int64_t cols_;
  bool ones_ = false;
};

// Walks one part (its thread blocks [bmtb_lo, bmtb_hi), all by default); `write(row_of_y, v)`
// receives every result that reaches global memory.
template <class Write>
void walk(const Format& f, const PartFormat& p, const std::vector<double>& x, Write write,
          std::int64_t bmtb_lo = 0, std::int64_t bmtb_hi = -1, bool x_ones = false) {
  if (p.n_bmtb == 0) return;
  if (bmtb_hi < 0) bmtb_hi = p.n_bmtb;
  Reader rd(f, p, x, x_ones);
  std::unique_ptr<ReductionModel> thread_m, warp_m, block_m;
  for (const auto& r : p.reductions) {
    const auto* op = find_reduction(r);
    if (!op) throw Error("format: unknown reduction " + r);
    switch (op->level()) {
      case RedLevel::Thread:
        thread_m = op->model();
        break;
      case RedLevel::Warp:
        warp_m = op->model();
        break;
      case RedLevel::Block:
        block_m = op->model();
        break;
      case RedLevel::Global:
        break;
    }
  }
  if (!thread_m) throw Error("format: part has no thread-level reduction");
  Cursor c;
  c.threads = p.threads;
  c.lanes = p.col_lanes;
  const int warps = p.threads / 32;
  const Emit global = [&](int, std::int64_t row, double v) {
    if (row < 0) return;
    if (row >= p.rows)
      throw Error("format: result for local row " + std::to_string(row) + " is out of range");
    const auto g = rd.at(Arr::origin_row, row);
    if (g < 0 || g >= f.rows) throw Error("format: origin_row holds " + std::to_string(g));
    write(g, v);
  };
  const Emit to_block = [&](int tid, std::int64_t row, double v) {
    block_m->accept(rd, c, tid, row, v, global);
  };
  const Emit& after_warp = block_m ? to_block : global;
  auto range = [&](Arr a, std::int64_t i, std::int64_t limit, std::int64_t& b, std::int64_t& e) {
    b = rd.at(a, i);
    e = rd.at(a, i + 1);
    if (b < 0 || b > e || e > limit)
      throw Error(std::string("format: ") + arr_name(a) + " is not a valid prefix");
  };
  for (std::int64_t bmtb = bmtb_lo; bmtb < bmtb_hi; ++bmtb) {
    c.bmtb = bmtb;
    std::int64_t wb, we;
    range(Arr::bmtb_first_bmw, bmtb, p.n_bmw, wb, we);
    if (block_m) block_m->begin_bmtb(rd, c);
    for (std::int64_t w0 = wb; w0 < we; w0 += warps) {
      for (int warp = 0; warp < warps; ++warp) {
        c.warp = warp;
        c.bmw = w0 + warp;
        c.w_active = c.bmw < we;
        std::int64_t tb = 0, te = 0;
        if (c.w_active) range(Arr::bmw_first_bmt, c.bmw, p.n_bmt, tb, te);
        for (std::int64_t t0 = tb; t0 < te; t0 += 32) {
          if (c.lanes > 1) {
            // SpMM, COL_TILE lanes: group q (lanes q*L .. q*L + L - 1) walks thread blocks
            // t0 + q*L + i, i = 0 .. L - 1, one after another, every lane on its own columns.
            // Walked one column at a time, each group's thread block is computed once (as the
            // lane of that column computes it) and its result held by every lane of the group.
            const int groups = 32 / c.lanes;
            for (int i = 0; i < c.lanes; ++i) {
              std::array<Pair, 32> lanes;
              for (int q = 0; q < groups; ++q) {
                c.lane = q * c.lanes;
                c.bmt = t0 + q * c.lanes + i;
                c.t_active = c.bmt < te;
                const Pair r = thread_m->thread(rd, c, after_warp);
                for (int g = 0; g < c.lanes; ++g) lanes[q * c.lanes + g] = r;
              }
              c.lane = 0;
              if (warp_m) {
                warp_m->round(rd, c, lanes, after_warp);
              } else {
                for (int q = 0; q < groups; ++q)
                  after_warp(warp * 32 + q * c.lanes, lanes[q * c.lanes].row, lanes[q * c.lanes].v);
              }
            }
            continue;
          }
          std::array<Pair, 32> lanes;
          for (int lane = 0; lane < 32; ++lane) {
            c.lane = lane;
            c.bmt = t0 + lane;
            c.t_active = c.bmt < te;
            lanes[lane] = thread_m->thread(rd, c, after_warp);
          }
          c.lane = 0;
          if (warp_m) {
            warp_m->round(rd, c, lanes, after_warp);
          } else {
            for (int lane = 0; lane < 32; ++lane)
              after_warp(warp * 32 + lane, lanes[lane].row, lanes[lane].v);
          }
        }
        if (warp_m) warp_m->end_bmw(rd, c, after_warp);
      }
    }
    if (block_m) block_m->end_bmtb(rd, c, global);
  }
}

}  // namespace

std::vector<double> interpret(const Format& f, const std::vector<double>& x) {
  if (static_cast<std::int64_t>(x.size()) != f.cols)
    throw Error("x has " + std::to_string(x.size()) + " entries, the matrix " +
                std::to_string(f.cols) + " columns");
  if (!f.scales_output_first()) {
    // Store-only, or a storing part first: the storing parts assign, in launch order, so a row
    // no storing unit writes stays NaN.
    std::vector<double> y(f.rows, std::numeric_limits<double>::quiet_NaN());
    for (const std::size_t i : f.launch_order())
      walk(f, f.parts[i], x, [&](std::int64_t r, double v) {
        if (f.part_stores(i))
          y[r] = v;
        else
          y[r] += v;
      });
    return y;
  }
  std::vector<double> y(f.rows, 0.0);
  for (const auto& p : f.parts) walk(f, p, x, [&](std::int64_t r, double v) { y[r] += v; });
  return y;
}

void interpret(const Format& f, const std::vector<double>& x, double alpha, double beta,
               std::vector<double>& y) {
  if (static_cast<std::int64_t>(x.size()) != f.cols)
    throw Error("x has " + std::to_string(x.size()) + " entries, the matrix " +
                std::to_string(f.cols) + " columns");
  if (static_cast<std::int64_t>(y.size()) != f.rows)
    throw Error("y has " + std::to_string(y.size()) + " entries, the matrix " +
                std::to_string(f.rows) + " rows");
  if (!f.scales_output_first()) {
    // y is read only through beta, as the store fragment does; a row no storing unit writes
    // keeps its old value, which the NaN-start interpret() above exposes.
    for (const std::size_t i : f.launch_order())
      walk(f, f.parts[i], x, [&](std::int64_t r, double v) {
        if (f.part_stores(i))
          y[r] = beta == 0.0 ? alpha * v : alpha * v + beta * y[r];
        else
          y[r] += alpha * v;
      });
    return;
  }
  for (auto& v : y) v = beta == 0.0 ? 0.0 : beta * v;
  for (const auto& p : f.parts) walk(f, p, x, [&](std::int64_t r, double v) { y[r] += alpha * v; });
}

namespace {

// Where element (r, j) of a dense matrix with leading dimension ld lies: row-major r * ld + j,
// column-major r + j * ld (Format::layout).
struct Dense {
  bool col_major = false;
  std::int64_t ld = 0;
  std::int64_t at(std::int64_t r, std::int64_t j) const {
    return col_major ? r + j * ld : r * ld + j;
  }
};

// Checks B's and C's shapes for interpret_spmm.
void check_spmm(const Format& f, const std::vector<double>& b, std::int64_t n, std::int64_t ldb,
                const std::vector<double>& c, std::int64_t ldc) {
  if (n < 1) throw Error("spmm: n must be at least 1, not " + std::to_string(n));
  const bool col = f.col_major();
  if (col ? ldb < std::max<std::int64_t>(f.cols, 1) || ldc < std::max<std::int64_t>(f.rows, 1)
          : ldb < n || ldc < n)
    throw Error(col ? "spmm: column-major ldb and ldc must be at least the rows of B and C"
                    : "spmm: ldb and ldc must be at least n");
  const auto need = [n, col](std::int64_t lines, std::int64_t ld) {
    if (lines == 0) return std::int64_t{0};
    return col ? (n - 1) * ld + lines : (lines - 1) * ld + n;
  };
  const char* what = col ? " rows in columns of stride " : " rows of stride ";
  if (static_cast<std::int64_t>(b.size()) < need(f.cols, ldb))
    throw Error("spmm: B holds " + std::to_string(b.size()) + " values, fewer than " +
                std::to_string(f.cols) + what + std::to_string(ldb));
  if (static_cast<std::int64_t>(c.size()) < need(f.rows, ldc))
    throw Error("spmm: C holds " + std::to_string(c.size()) + " values, fewer than " +
                std::to_string(f.rows) + what + std::to_string(ldc));
}

// Column j of B as an x.
std::vector<double> column(const std::vector<double>& b, std::int64_t rows, const Dense& d,
                           std::int64_t j) {
  std::vector<double> x(rows);
  for (std::int64_t r = 0; r < rows; ++r) x[r] = b[d.at(r, j)];
  return x;
}

}  // namespace

void interpret_spmm(const Format& f, const std::vector<double>& b, std::int64_t n, std::int64_t ldb,
                    double alpha, double beta, std::vector<double>& c, std::int64_t ldc) {
  if (f.op != "spmm") throw Error("interpret_spmm: the format's op is " + f.op + ", not spmm");
  check_spmm(f, b, n, ldb, c, ldc);
  const Dense db{f.col_major(), ldb}, dc{f.col_major(), ldc};
  for (std::int64_t j = 0; j < n; ++j) {
    const auto x = column(b, f.cols, db, j);
    if (f.store_only) {
      for (const auto& p : f.parts)
        walk(f, p, x, [&](std::int64_t r, double v) {
          double& out = c[dc.at(r, j)];
          out = beta == 0.0 ? alpha * v : alpha * v + beta * out;
        });
      continue;
    }
    for (std::int64_t r = 0; r < f.rows; ++r) {
      double& out = c[dc.at(r, j)];
      out = beta == 0.0 ? 0.0 : beta * out;
    }
    for (const auto& p : f.parts)
      walk(f, p, x, [&](std::int64_t r, double v) { c[dc.at(r, j)] += alpha * v; });
  }
}

std::vector<double> interpret_spmm(const Format& f, const std::vector<double>& b, std::int64_t n) {
  std::vector<double> c(static_cast<std::size_t>(f.rows * std::max<std::int64_t>(n, 0)),
                        std::numeric_limits<double>::quiet_NaN());
  const std::int64_t ldb = f.col_major() ? std::max<std::int64_t>(f.cols, 1) : n;
  const std::int64_t ldc = f.col_major() ? std::max<std::int64_t>(f.rows, 1) : n;
  interpret_spmm(f, b, n, ldb, 1.0, 0.0, c, ldc);
  return c;
}

std::vector<std::int64_t> count_writes(const Format& f, std::size_t part) {
  std::vector<std::int64_t> n(f.rows, 0);
  const std::vector<double> x(f.cols, 1.0);
  const auto& p = f.parts.at(part);
  // Every reduction model starts afresh at a thread block, so ranges of them are walked on
  // several threads (the Designer counts every part of a large design); counts commute.
  const int ranges = static_cast<int>(std::clamp<std::int64_t>(
      threads_for(std::max(p.nnz_stored, p.rows)), 1, std::max<std::int64_t>(p.n_bmtb, 1)));
  parallel_for(ranges, ranges, [&](int q) {
    walk(
        f, p, x,
        [&](std::int64_t r, double) {
          std::atomic_ref<std::int64_t>(n[r]).fetch_add(1, std::memory_order_relaxed);
        },
        p.n_bmtb * q / ranges, p.n_bmtb * (q + 1) / ranges, true);
  });
  return n;
}

bool writes_each_row_once(const Format& f, std::size_t part) {
  if (f.parts.at(part).atomic) return false;
  const auto n = count_writes(f, part);
  return std::all_of(n.begin(), n.end(), [](std::int64_t k) { return k == 1; });
}

bool writes_each_row_once(const Format& f) {
  std::vector<std::int64_t> n(f.rows, 0);
  const std::vector<double> x(f.cols, 1.0);
  for (const auto& p : f.parts) {
    if (p.atomic) return false;
    walk(f, p, x, [&](std::int64_t r, double) { ++n[r]; });
  }
  return std::all_of(n.begin(), n.end(), [](std::int64_t k) { return k == 1; });
}

}  // namespace sparsetune::graph
