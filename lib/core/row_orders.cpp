#include "core/row_orders.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <numeric>
#include <span>

#include "core/error.hpp"
#include "core/memory.hpp"

namespace sparsetune::row_orders {

namespace {

struct Names {
  Order o;
  const char* s;
};
constexpr Names kNames[] = {
    {Order::original, "original"},
    {Order::dcsr, "dcsr"},
    {Order::plain, "plain"},
    {Order::flipped, "flipped"},
    {Order::lpt, "lpt"},
    {Order::warp_aware, "warp-aware"},
    {Order::cta_aware, "cta-aware"},
    {Order::hybrid1, "hybrid1"},
    {Order::hybrid2_1, "hybrid2.1"},
    {Order::hybrid2_2, "hybrid2.2"},
    {Order::hybrid2_3, "hybrid2.3"},
};

std::vector<std::int64_t> warp_loads(const Csr64& a, int threads) {
  std::vector<std::int64_t> w(a.rows);
  for (std::int64_t r = 0; r < a.rows; ++r) w[r] = (a.row_length(r) + threads - 1) / threads;
  return w;
}

// Each row's lines of B (column / line), sorted and distinct, in one array (row r's are
// line[ptr[r] .. ptr[r + 1]): the searches read millions of them in random row order.
struct Masks {
  std::vector<std::int64_t> ptr, line;
  std::int64_t lines = 0;  // lines of B: every line index is below it
  std::span<const std::int64_t> operator[](std::int64_t r) const {
    return {line.data() + ptr[r], static_cast<std::size_t>(ptr[r + 1] - ptr[r])};
  }
  std::int64_t rows() const { return static_cast<std::int64_t>(ptr.size()) - 1; }
};
Masks masks(const Csr64& a, int line) {
  Masks m;
  m.lines = (a.cols + line - 1) / line;
  m.ptr.reserve(static_cast<std::size_t>(a.rows) + 1);
  m.ptr.push_back(0);
  m.line.reserve(static_cast<std::size_t>(a.nnz()));
  for (std::int64_t r = 0; r < a.rows; ++r) {
    for (auto k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
      const std::int64_t l = a.col_idx[k] / line;
      // Columns are sorted in a row.
      if (static_cast<std::int64_t>(m.line.size()) == m.ptr.back() || m.line.back() != l)
        m.line.push_back(l);
    }
    m.ptr.push_back(static_cast<std::int64_t>(m.line.size()));
  }
  return m;
}

// |a xor b| of two sorted line sets.
std::int64_t hamming(std::span<const std::int64_t> a, std::span<const std::int64_t> b) {
  std::size_t i = 0, j = 0;
  std::int64_t common = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] == b[j])
      ++common, ++i, ++j;
    else if (a[i] < b[j])
      ++i;
    else
      ++j;
  }
  return static_cast<std::int64_t>(a.size() + b.size()) - 2 * common;
}

// Rows not placed yet, in matrix order, removable in O(1).
class Pool {
 public:
  explicit Pool(std::int64_t n) : next_(n + 1), prev_(n + 1) {
    for (std::int64_t i = 0; i <= n; ++i) next_[i] = i + 1, prev_[i] = i - 1;
    // node n is the end; node -1 is represented by head_
    head_ = n > 0 ? 0 : n;
    end_ = n;
  }
  std::int64_t first() const { return head_; }
  std::int64_t next(std::int64_t r) const { return next_[r]; }
  bool at_end(std::int64_t r) const { return r >= end_; }
  void take(std::int64_t r) {
    if (prev_[r] >= 0)
      next_[prev_[r]] = next_[r];
    else
      head_ = next_[r];
    if (next_[r] < end_) prev_[next_[r]] = prev_[r];
  }

 private:
  std::vector<std::int64_t> next_, prev_;
  std::int64_t head_ = 0, end_ = 0;
};

enum class Tie { none, load, warp_distance };

// Each line's rows (the masks transposed), in row order.
struct LineRows {
  std::vector<std::int64_t> ptr, rows;
};
LineRows line_rows(const Masks& mask) {
  const std::int64_t lines = mask.lines;
  LineRows t;
  t.ptr.assign(static_cast<std::size_t>(lines) + 1, 0);
  for (auto l : mask.line) ++t.ptr[l + 1];
  for (std::int64_t l = 0; l < lines; ++l) t.ptr[l + 1] += t.ptr[l];
  t.rows.resize(static_cast<std::size_t>(t.ptr[lines]));
  auto fill = t.ptr;
  for (std::int64_t r = 0; r < mask.rows(); ++r)
    for (auto l : mask[r]) t.rows[fill[l]++] = r;
  return t;
}

// |a xor b| for many b against one a: a's lines stamped once, each b then costs |b|.
class LineStamp {
 public:
  explicit LineStamp(std::int64_t lines) : at_(static_cast<std::size_t>(lines), -1) {}
  void mark(std::span<const std::int64_t> a, std::int64_t step) {
    for (auto l : a) at_[l] = step;
    size_ = static_cast<std::int64_t>(a.size());
    step_ = step;
  }
  std::int64_t distance(std::span<const std::int64_t> b) const {
    std::int64_t common = 0;
    for (auto l : b) common += at_[l] == step_;
    return size_ + static_cast<std::int64_t>(b.size()) - 2 * common;
  }

 private:
  std::vector<std::int64_t> at_;
  std::int64_t size_ = 0, step_ = -1;
};

// The candidates of Candidates::shared_lines: up to `window` rows not placed yet that share a
// line with `ref`, walking ref's lines in order (at most 8 · window list entries a step, however
// many rows read those lines); the rest of the window from the pool, in matrix order. `first_[l]`
// skips the placed rows at the head of line l's list for good.
class SharedLineCandidates {
 public:
  explicit SharedLineCandidates(const Masks& mask)
      : mask_(mask),
        index_(line_rows(mask)),
        first_(index_.ptr.begin(), index_.ptr.end() - 1),
        placed_(static_cast<std::size_t>(mask.rows()), 0),
        mark_(static_cast<std::size_t>(mask.rows()), -1) {}
  void place(std::int64_t r) { placed_[r] = 1; }
  const std::vector<std::int64_t>& of(std::int64_t ref, std::int64_t step, const Pool& pool,
                                      int window) {
    out_.clear();
    std::int64_t visits = 0;
    const std::int64_t budget = 8 * static_cast<std::int64_t>(window);
    for (auto l : mask_[ref]) {
      auto& k = first_[l];
      const auto end = index_.ptr[l + 1];
      while (k < end && placed_[index_.rows[k]]) ++k;
      for (auto j = k; j < end && visits < budget && static_cast<int>(out_.size()) < window;
           ++j, ++visits)
        take(index_.rows[j], step);
      if (visits >= budget || static_cast<int>(out_.size()) >= window) break;
    }
    for (std::int64_t r = pool.first(); !pool.at_end(r) && static_cast<int>(out_.size()) < window;
         r = pool.next(r))
      take(r, step);
    return out_;
  }

 private:
  void take(std::int64_t r, std::int64_t step) {
    if (placed_[r] || mark_[r] == step) return;
    mark_[r] = step;
    out_.push_back(r);
  }
  const Masks& mask_;
  LineRows index_;
  std::vector<std::int64_t> first_;
  std::vector<char> placed_;
  std::vector<std::int64_t> mark_;  // the step a row was last taken as a candidate
  std::vector<std::int64_t> out_;
};

// The greedy Hamming orders: row i is the candidate (see Candidates) nearest to row i - `back`
// of the order so far; ties by `tie`, then the candidates' order. The first `back` rows: the
// first rows of `seed` (warp-aware: the lightest rows), else the first of the matrix. A
// candidate whose line count alone puts it farther than the best so far is not compared: a long
// row left in the window would otherwise cost its length at every step.
std::vector<std::int64_t> nearest_chain(const Csr64& a, const Options& o, std::int64_t back,
                                        Tie tie, const std::vector<std::int64_t>& seed) {
  const auto load = warp_loads(a, o.threads);
  const auto mask = masks(a, o.line);
  Pool pool(a.rows);
  LineStamp stamp(mask.lines);
  std::unique_ptr<SharedLineCandidates> shared;
  if (o.candidates == Candidates::shared_lines)
    shared = std::make_unique<SharedLineCandidates>(mask);
  auto place = [&](std::vector<std::int64_t>& p, std::int64_t r) {
    p.push_back(r);
    pool.take(r);
    if (shared) shared->place(r);
  };
  std::vector<std::int64_t> p;
  p.reserve(a.rows);
  for (std::int64_t i = 0; i < std::min<std::int64_t>(back, a.rows); ++i)
    place(p, seed.empty() ? pool.first() : seed[i]);
  for (std::int64_t i = static_cast<std::int64_t>(p.size()); i < a.rows; ++i) {
    const std::int64_t ref = p[i - back];
    const auto ref_size = static_cast<std::int64_t>(mask[ref].size());
    stamp.mark(mask[ref], i);
    std::int64_t best = -1, best_d = 0, best_t = 0;
    auto consider = [&](std::int64_t r) {
      const auto size = static_cast<std::int64_t>(mask[r].size());
      if (best >= 0 && std::llabs(size - ref_size) > best_d) return;  // |a xor b| >= ||a| - |b||
      const std::int64_t d = stamp.distance(mask[r]);
      if (best >= 0 && d > best_d) return;
      std::int64_t t = 0;
      if (tie == Tie::load) t = std::llabs(load[r] - load[p[i - 1]]);
      if (tie == Tie::warp_distance && i >= o.warps) t = hamming(mask[r], mask[p[i - o.warps]]);
      if (best < 0 || d < best_d || (d == best_d && t < best_t)) best = r, best_d = d, best_t = t;
    };
    if (shared) {
      for (auto r : shared->of(ref, i, pool, o.window)) consider(r);
    } else {
      int seen = 0;
      for (std::int64_t r = pool.first(); !pool.at_end(r) && seen < o.window;
           r = pool.next(r), ++seen)
        consider(r);
    }
    place(p, best);
  }
  return p;
}

// Rows by warp load, largest first (ties: matrix order).
std::vector<std::int64_t> by_load(const std::vector<std::int64_t>& load, bool largest_first) {
  std::vector<std::int64_t> p(load.size());
  std::iota(p.begin(), p.end(), 0);
  std::stable_sort(p.begin(), p.end(), [&](std::int64_t x, std::int64_t y) {
    return largest_first ? load[x] > load[y] : load[x] < load[y];
  });
  return p;
}

// LPT with each warp given exactly its share of rows (so that striping the result gives warp w
// exactly the rows assigned to it): rows largest first, each to the least loaded warp that still
// has room; with `locality`, among rows of equal load the one nearest (Hamming) to that warp's
// previous row goes first.
std::vector<std::int64_t> lpt(const Csr64& a, const Options& o, bool locality) {
  const auto load = warp_loads(a, o.threads);
  const auto mask = locality ? masks(a, o.line) : Masks{};  // hybrid-1's locality only
  LineStamp stamp(mask.lines);
  const std::int64_t m = a.rows, nw = o.warps;
  std::vector<std::int64_t> cap(nw), sum(nw, 0);
  std::vector<std::vector<std::int64_t>> rows_of(nw);
  for (std::int64_t w = 0; w < nw; ++w) cap[w] = m / nw + (w < m % nw ? 1 : 0);
  auto least_loaded = [&] {
    std::int64_t best = -1;
    for (std::int64_t w = 0; w < nw; ++w)
      if (static_cast<std::int64_t>(rows_of[w].size()) < cap[w] && (best < 0 || sum[w] < sum[best]))
        best = w;
    return best;
  };
  const auto order = by_load(load, true);
  for (std::size_t g = 0; g < order.size();) {
    std::size_t end = g;  // [g, end): one warp load
    while (end < order.size() && load[order[end]] == load[order[g]]) ++end;
    // The group's rows not assigned yet, in order, removable in O(1).
    Pool left(static_cast<std::int64_t>(end - g));
    for (std::size_t n = g; n < end; ++n) {
      const std::int64_t w = least_loaded();
      std::int64_t pick = left.first();
      if (locality && !rows_of[w].empty()) {
        const auto prev = mask[rows_of[w].back()];
        const auto prev_size = static_cast<std::int64_t>(prev.size());
        stamp.mark(prev, static_cast<std::int64_t>(n));
        std::int64_t best_d = -1;
        int seen = 0;
        for (std::int64_t k = left.first(); !left.at_end(k) && seen < o.window;
             k = left.next(k), ++seen) {
          const auto cand = mask[order[g + k]];
          // As in nearest_chain: |a xor b| >= ||a| - |b||, and the first nearest wins.
          if (best_d >= 0 &&
              std::llabs(static_cast<std::int64_t>(cand.size()) - prev_size) >= best_d)
            continue;
          const std::int64_t d = stamp.distance(cand);
          if (best_d < 0 || d < best_d) best_d = d, pick = k;
        }
      }
      left.take(pick);
      const std::int64_t row = order[g + pick];
      rows_of[w].push_back(row);
      sum[w] += load[row];
    }
    g = end;
  }
  std::vector<std::int64_t> p(m);
  for (std::int64_t w = 0; w < nw; ++w)
    for (std::size_t k = 0; k < rows_of[w].size(); ++k)
      p[static_cast<std::int64_t>(k) * nw + w] = rows_of[w][k];
  return p;
}

}  // namespace

const std::vector<Order>& all_orders() {
  static const std::vector<Order> all = [] {
    std::vector<Order> v;
    for (const auto& n : kNames) v.push_back(n.o);
    return v;
  }();
  return all;
}

std::string name(Order o) {
  for (const auto& n : kNames)
    if (n.o == o) return n.s;
  return "?";
}

std::string name(Candidates c) { return c == Candidates::matrix ? "matrix" : "shared-lines"; }

bool uses_candidates(Order o) {
  return o == Order::warp_aware || o == Order::cta_aware || o == Order::hybrid2_1 ||
         o == Order::hybrid2_2 || o == Order::hybrid2_3;
}

Candidates parse_candidates(const std::string& s) {
  for (auto c : {Candidates::matrix, Candidates::shared_lines})
    if (s == name(c)) return c;
  throw Error("unknown row-order candidates '" + s + "' (known: matrix, shared-lines)");
}

Order parse(const std::string& s) {
  std::string known;
  for (const auto& n : kNames) {
    if (s == n.s) return n.o;
    known += std::string(known.empty() ? "" : ", ") + n.s;
  }
  throw Error("unknown row order '" + s + "' (known: " + known + ")");
}

namespace {

// The Hamming orders cost seconds on matrices of 10^6 entries, and one matrix asks for the same
// order again and again (each candidate of a search designs it, `row-orders collect` at every
// N): the last few of them are kept, keyed by the matrix's pattern and the options.
struct CacheKey {
  std::uint64_t pattern = 0;
  std::int64_t rows = 0, cols = 0, nnz = 0;
  int order = 0, warps = 0, threads = 0, line = 0, window = 0;
  Candidates candidates = Candidates::matrix;
  bool operator==(const CacheKey& o) const {
    return pattern == o.pattern && rows == o.rows && cols == o.cols && nnz == o.nnz &&
           order == o.order && warps == o.warps && threads == o.threads && line == o.line &&
           window == o.window && candidates == o.candidates;
  }
};

constexpr std::int64_t kCacheMinNnz = 1 << 16;  // below, computing is cheaper than hashing
// More than one matrix's eleven orders: a cycle over all of them (collect at each N) must hit,
// and least-recently-used eviction misses every time on a cycle longer than the cache.
constexpr std::size_t kCacheEntries = 24;
constexpr std::size_t kCacheBytes = std::size_t(1) << 30;  // and at most 1 GiB of permutations

std::mutex cache_mutex;
std::deque<std::pair<CacheKey, std::vector<std::int64_t>>> cache;  // newest first

std::uint64_t pattern_hash(const Csr64& a) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
  for (auto v : a.row_ptr) mix(static_cast<std::uint64_t>(v));
  for (auto v : a.col_idx) mix(static_cast<std::uint64_t>(v));
  return h;
}

std::vector<std::int64_t> compute(const Csr64& a, Order o, const Options& opt);

CacheKey key_of(const Csr64& a, Order o, const Options& opt) {
  return {pattern_hash(a), a.rows,      a.cols,   a.nnz(),    static_cast<int>(o),
          opt.warps,       opt.threads, opt.line, opt.window, opt.candidates};
}

void check_options(const Options& opt) {
  if (opt.warps < 1 || opt.threads < 1 || opt.line < 1 || opt.window < 1)
    throw Error("row orders: warps, threads, line and window must be at least 1");
}

}  // namespace

std::vector<std::int64_t> compute_row_order(const Csr64& a, Order o, const Options& opt) {
  check_options(opt);
  // Each order keeps a few arrays per row (about 70 bytes a row measured, all orders' peak) and
  // the Hamming searches a list of rows per line of B: refused up front where that cannot fit,
  // rather than killed half-way (a matrix of 10^9 mostly empty rows reads in 16 GB).
  const double lines = static_cast<double>(a.cols) / opt.line + 1.0;
  check_memory_need(
      96.0 * static_cast<double>(a.rows) + 32.0 * static_cast<double>(a.nnz()) + 16.0 * lines,
      "the " + name(o) + " row order of a " + std::to_string(a.rows) + " x " +
          std::to_string(a.cols) + " matrix");
  auto p = compute(a, o, opt);
  if (a.nnz() >= kCacheMinNnz) {
    const auto key = key_of(a, o, opt);
    std::lock_guard<std::mutex> lock(cache_mutex);
    std::erase_if(cache, [&](const auto& e) { return e.first == key; });
    cache.emplace_front(key, p);
    std::size_t bytes = 0;
    for (const auto& e : cache) bytes += e.second.size() * sizeof(std::int64_t);
    while (cache.size() > 1 && (cache.size() > kCacheEntries || bytes > kCacheBytes)) {
      bytes -= cache.back().second.size() * sizeof(std::int64_t);
      cache.pop_back();
    }
  }
  return p;
}

std::vector<std::int64_t> row_order(const Csr64& a, Order o, const Options& opt) {
  check_options(opt);
  if (a.nnz() >= kCacheMinNnz) {
    const auto key = key_of(a, o, opt);
    std::lock_guard<std::mutex> lock(cache_mutex);
    for (const auto& [k, p] : cache)
      if (k == key) return p;
  }
  return compute_row_order(a, o, opt);
}

namespace {

std::vector<std::int64_t> compute(const Csr64& a, Order o, const Options& opt) {
  const auto load = warp_loads(a, opt.threads);
  std::vector<std::int64_t> p(a.rows);
  std::iota(p.begin(), p.end(), 0);
  switch (o) {
    case Order::original:
      return p;
    case Order::dcsr:
      std::stable_partition(p.begin(), p.end(),
                            [&](std::int64_t r) { return a.row_length(r) > 0; });
      return p;
    case Order::plain:
      return by_load(load, true);
    case Order::flipped: {
      p = by_load(load, true);
      for (std::int64_t g = 1; g * opt.warps < a.rows; g += 2) {
        const auto first = p.begin() + g * opt.warps;
        std::reverse(first, p.begin() + std::min<std::int64_t>(a.rows, (g + 1) * opt.warps));
      }
      return p;
    }
    case Order::lpt:
      return lpt(a, opt, false);
    case Order::hybrid1:
      return lpt(a, opt, true);
    case Order::warp_aware:
      return nearest_chain(a, opt, opt.warps, Tie::none, by_load(load, false));
    case Order::hybrid2_3:
      return nearest_chain(a, opt, opt.warps, Tie::load, by_load(load, false));
    case Order::cta_aware:
      return nearest_chain(a, opt, 1, Tie::none, {});
    case Order::hybrid2_1:
      return nearest_chain(a, opt, 1, Tie::load, {});
    case Order::hybrid2_2:
      return nearest_chain(a, opt, 1, Tie::warp_distance, {});
  }
  return p;
}

}  // namespace

std::int64_t max_warp_load(const Csr64& a, const std::vector<std::int64_t>& p, const Options& opt) {
  const auto load = warp_loads(a, opt.threads);
  std::vector<std::int64_t> sum(opt.warps, 0);
  for (std::size_t i = 0; i < p.size(); ++i) sum[i % opt.warps] += load[p[i]];
  return sum.empty() ? 0 : *std::max_element(sum.begin(), sum.end());
}

std::int64_t lines_per_step(const Csr64& a, const std::vector<std::int64_t>& p,
                            const Options& opt) {
  const auto mask = masks(a, opt.line);
  std::vector<std::int64_t> stamp(static_cast<std::size_t>(mask.lines), -1);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const auto step = static_cast<std::int64_t>(i) / opt.warps;
    for (auto l : mask[p[i]])
      if (stamp[l] != step) stamp[l] = step, ++total;
  }
  return total;
}

std::vector<OrderReport> compare_orders(const Csr64& a, const Options& opt) {
  std::vector<OrderReport> out;
  for (auto o : all_orders()) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto p = compute_row_order(a, o, opt);  // its cost, not a kept answer's
    OrderReport r{o};
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.max_warp_load = max_warp_load(a, p, opt);
    r.lines_per_step = lines_per_step(a, p, opt);
    out.push_back(r);
  }
  return out;
}

}  // namespace sparsetune::row_orders
