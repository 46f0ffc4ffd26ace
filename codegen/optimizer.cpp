#include "codegen/optimizer.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include "core/error.hpp"
#include "core/parallel_for.hpp"

namespace sparsetune::codegen {

namespace {

// Two's-complement wrapping arithmetic for candidate coefficients: a wrapped candidate simply
// fails the exact check in try_model.
std::int64_t wsub(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
std::int64_t wmul(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}

using graph::ArrayModel;
using Kind = ArrayModel::Kind;

// Formula value with the kernel's 64-bit arithmetic; false when an intermediate would overflow.
bool eval_safe(const ArrayModel& m, std::int64_t i, std::int64_t& out) {
  __extension__ typedef __int128 W;
  const W lim = W{1} << 62;
  W v = 0;
  switch (m.kind) {
    case Kind::Constant:
      v = m.a;
      break;
    case Kind::Linear:
      v = W{m.a} * i + m.b;
      break;
    case Kind::Step:
      v = W{m.a} * (i / m.p) + m.b;
      break;
    case Kind::Periodic:
      v = W{m.a} * (i % m.p) + W{m.b} * (i / m.p) + m.c;
      break;
    case Kind::Table:
      v = W{m.a} * (i % m.p) + m.table[static_cast<std::size_t>(i / m.p)];
      if (v >= lim || v <= -lim) return false;
      v = std::min<W>(std::max<W>(v, m.b), m.c);
      break;
    case Kind::Stored:
    case Kind::Derived:
    case Kind::Packed:
      return false;
  }
  if (v >= lim || v <= -lim) return false;
  out = static_cast<std::int64_t>(v);
  return true;
}

// Fills the exception list; false when more than `budget` values are missed.
bool try_model(ArrayModel& m, const std::vector<std::int64_t>& v, int budget) {
  m.exceptions.clear();
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::int64_t f;
    if (!eval_safe(m, static_cast<std::int64_t>(i), f) || f != v[i]) {
      if (static_cast<int>(m.exceptions.size()) >= budget) return false;
      m.exceptions.push_back({static_cast<std::int64_t>(i), v[i]});
    }
  }
  return true;
}

// Table model of period p: within a period the values rise by a (taken where nothing is
// clamped), each period has its own offset, and everything is clamped to the array's range.
bool table_candidate(const std::vector<std::int64_t>& v, std::int64_t p, ArrayModel& m) {
  const auto n = static_cast<std::int64_t>(v.size());
  if (p < 2 || n % p != 0 || static_cast<std::size_t>(n / p) > graph::kMaxModelTable) return false;
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  m = ArrayModel{};
  m.kind = Kind::Table;
  m.p = p;
  m.b = *lo;
  m.c = *hi;
  const auto inside = [&](std::int64_t i) { return v[i] > m.b && v[i] < m.c; };
  bool have_slope = false;
  for (std::int64_t i = p / 2; i + 1 < n && !have_slope; i += p)
    if (inside(i) && inside(i + 1) && (i + 1) % p != 0)
      m.a = wsub(v[i + 1], v[i]), have_slope = true;
  if (!have_slope || m.a <= 0) return false;
  for (std::int64_t k = 0; k < n / p; ++k) {
    // An unclamped value of the period fixes its offset; the middle one first.
    std::int64_t at = -1;
    for (std::int64_t step = 0; step < p && at < 0; ++step) {
      const std::int64_t j = (p / 2 + (step % 2 ? (step + 1) / 2 : -(step / 2)) + p) % p;
      if (inside(k * p + j)) at = j;
    }
    if (at >= 0)
      m.table.push_back(wsub(v[k * p + at], wmul(m.a, at)));
    else  // the whole period is clamped to one end
      m.table.push_back(v[k * p] <= m.b ? wsub(m.b, wmul(m.a, p)) : m.c);
  }
  return true;
}

}  // namespace

ArrayModel fit_model(const std::vector<std::int64_t>& v, int max_exceptions) {
  return fit_model(v, max_exceptions, {});
}

ArrayModel fit_model(const std::vector<std::int64_t>& v, int max_exceptions,
                     const std::vector<std::int64_t>& periods) {
  const auto n = static_cast<std::int64_t>(v.size());
  std::vector<ArrayModel> candidates;
  if (n == 0) {
    ArrayModel m;
    m.kind = Kind::Constant;
    return m;
  }
  // Candidates from a few sample positions, so that a misfit at one of them does not hide the
  // formula.
  const std::vector<std::int64_t> at = {0, 1, 2, n / 4, n / 2, n / 2 + 1, 3 * n / 4, n - 3, n - 2};
  for (std::int64_t j : at) {
    if (j < 0 || j >= n) continue;
    ArrayModel m;
    m.kind = Kind::Constant;
    m.a = v[j];
    candidates.push_back(m);
    if (j + 1 >= n) continue;
    m.kind = Kind::Linear;
    m.a = wsub(v[j + 1], v[j]);
    m.b = wsub(v[j], wmul(m.a, j));
    candidates.push_back(m);
  }
  // Step: the first run of equal values gives the period.
  std::int64_t run = 1;
  while (run < n && v[run] == v[0]) ++run;
  if (run >= 2 && run < n) {
    ArrayModel m;
    m.kind = Kind::Step;
    m.p = run;
    m.a = wsub(v[run], v[0]);
    m.b = v[0];
    candidates.push_back(m);
  }
  // Periodic linear: the first break of the initial slope gives the period.
  if (n >= 3) {
    const std::int64_t a = wsub(v[1], v[0]);
    std::int64_t p = 1;
    while (p < n && wsub(v[p], v[p - 1]) == a) ++p;
    if (p >= 2 && p < n) {
      ArrayModel m;
      m.kind = Kind::Periodic;
      m.p = p;
      m.a = a;
      m.b = wsub(v[p], v[0]);
      m.c = v[0];
      candidates.push_back(m);
    }
  }
  // Table models, tried only for the periods the caller names (the part's thread count).
  for (std::int64_t p : periods) {
    ArrayModel m;
    if (table_candidate(v, p, m)) candidates.push_back(std::move(m));
  }
  const int budget = static_cast<int>(std::min<std::int64_t>(max_exceptions, n / 4));
  ArrayModel best;
  std::size_t best_exc = std::numeric_limits<std::size_t>::max();
  const auto same = [](const ArrayModel& x, const ArrayModel& y) {
    return x.kind == y.kind && x.a == y.a && x.b == y.b && x.c == y.c && x.p == y.p &&
           x.table == y.table;
  };
  // Each check walks the whole array: a candidate equal to an earlier one cannot do better
  // (only fewer misses replace the best), nor can anything once the best misses nothing.
  for (std::size_t k = 0; k < candidates.size() && best_exc > 0; ++k) {
    auto& m = candidates[k];
    if (std::any_of(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(k),
                    [&](const ArrayModel& e) { return same(e, m); }))
      continue;
    if (!try_model(m, v, budget)) continue;
    if (m.exceptions.size() < best_exc) best = m, best_exc = m.exceptions.size();
  }
  return best;
}

int derive_strided_threads(graph::PartFormat& p, int mode, int index_bits) {
  using graph::Arr;
  const Arr thread_arrays[] = {Arr::bmt_first_nz, Arr::bmt_stride, Arr::bmt_size, Arr::bmt_row};
  for (Arr a : {Arr::bmt_first_nz, Arr::bmt_stride, Arr::bmt_size})
    if (!p.has(a) || p.array(a).model.kind == Kind::Derived) return 0;
  const bool warp = mode == 1;
  const std::int64_t parents = warp ? p.n_bmw : p.n_bmtb;
  const auto& first_bmt = p.array(Arr::bmw_first_bmt).ints;
  const auto& first_bmw = p.array(Arr::bmtb_first_bmw).ints;
  const auto& size = p.array(Arr::bmt_size).ints;
  static const std::vector<std::int64_t> kNoRows;
  const auto& row = p.has(Arr::bmt_row) ? p.array(Arr::bmt_row).ints : kNoRows;
  // Parents back to back: each starts where the previous one ends and holds its threads' sizes.
  std::vector<std::int64_t> prefix{0}, parent_row;
  for (std::int64_t q = 0; q < parents; ++q) {
    const std::int64_t t0 = warp ? first_bmt[q] : first_bmt[first_bmw[q]];
    const std::int64_t t1 = warp ? first_bmt[q + 1] : first_bmt[first_bmw[q + 1]];
    std::int64_t n = 0;
    for (std::int64_t t = t0; t < t1; ++t) n += size[t];
    prefix.push_back(prefix.back() + n);
    parent_row.push_back(t1 > t0 && !row.empty() ? row[t0] : -1);
  }
  // The trial copies only the parents' arrays: the entries, values and rows move over to it on
  // success and back to `p` otherwise; the thread arrays are recomputed in it and compared with
  // the originals, kept aside.
  std::map<std::string, graph::FormatArray> others, originals;
  for (auto it = p.arrays.begin(); it != p.arrays.end();) {
    const auto which = graph::arr_from_name(it->first);
    if (which == Arr::nz_col || which == Arr::nz_val || which == Arr::nz_row_delta ||
        which == Arr::origin_row) {
      others.insert(p.arrays.extract(it++));
    } else if (which == Arr::bmt_first_nz || which == Arr::bmt_stride || which == Arr::bmt_size ||
               which == Arr::bmt_row) {
      originals.insert(p.arrays.extract(it++));
    } else {
      ++it;
    }
  }
  const auto restore = [&](graph::PartFormat& to, std::map<std::string, graph::FormatArray>& m) {
    for (auto& [name, a] : m) to.arrays[name] = std::move(a);
  };
  graph::PartFormat trial = p;
  trial.implied_threads = mode;
  auto int_array = [&](std::vector<std::int64_t> v) {
    graph::FormatArray a;
    a.length = static_cast<std::int64_t>(v.size());
    a.dtype = index_bits == 32 ? "I32" : "I64";
    a.ints = std::move(v);
    return a;
  };
  trial.arrays[graph::arr_name(warp ? Arr::bmw_first_nz : Arr::bmtb_first_nz)] = int_array(prefix);
  const Arr parent_row_arr = warp ? Arr::bmw_row : Arr::bmtb_row;
  const bool had_row = trial.has(parent_row_arr);
  if (!had_row) trial.arrays[graph::arr_name(parent_row_arr)] = int_array(parent_row);
  for (const auto& [name, a] : originals) {
    graph::FormatArray d;
    d.dtype = a.dtype;
    d.length = a.length;
    d.model = ArrayModel{};
    d.model.kind = Kind::Derived;
    trial.arrays[name] = std::move(d);  // values filled by derive_implied_threads
  }
  try {
    graph::derive_implied_threads(trial);
  } catch (const Error&) {
    restore(p, others);
    restore(p, originals);
    return 0;  // the parents do not hold their threads' entries
  }
  int derived = 0;
  for (Arr a : thread_arrays) {
    if (!trial.has(a)) continue;
    auto& original = originals.at(graph::arr_name(a));
    if (trial.array(a).ints == original.ints) {
      ++derived;
      continue;
    }
    if (a != Arr::bmt_row) {
      restore(p, others);
      restore(p, originals);
      return 0;  // not the strided pattern: keep the arrays
    }
    trial.arrays[graph::arr_name(a)] = std::move(original);  // threads of several rows keep theirs
    if (!had_row) trial.arrays.erase(graph::arr_name(parent_row_arr));
  }
  restore(trial, others);
  p = std::move(trial);
  return derived;
}

OptimizerReport optimize(graph::Format& f, const OptimizerOptions& opt) {
  OptimizerReport r;
  r.bytes_before = graph::stored_bytes(f);
  for (auto& p : f.parts) {
    if (opt.derive_threads && p.implied_threads == 0) {
      const int d = derive_strided_threads(p, 1, f.index_bits);
      r.derived += d ? d : derive_strided_threads(p, 2, f.index_bits);
    }
    // The fits are independent: every array's on its own thread, each into its own model.
    std::vector<graph::FormatArray*> fit;
    for (auto& [name, a] : p.arrays)
      if (opt.compress && a.dtype[0] != 'F' && a.model.kind != Kind::Derived) fit.push_back(&a);
    const int n = static_cast<int>(fit.size());
    parallel_for(n, all_cores(), [&](int k) {
      fit[k]->model = fit_model(fit[k]->ints, opt.max_exceptions, {p.n_bmt, p.rows});
    });
    for (auto& [name, a] : p.arrays) {
      if (a.dtype[0] == 'F' || a.model.kind == Kind::Derived) continue;
      if (opt.compress) {
        if (!a.stored()) {
          ++r.modeled;
          continue;
        }
      }
      if (opt.narrow && !a.ints.empty()) {
        const auto [lo, hi] = std::minmax_element(a.ints.begin(), a.ints.end());
        const std::string d = graph::int_dtype_for(*lo, *hi, f.index_bits);
        if (d != a.dtype) a.dtype = d, ++r.narrowed;
      }
    }
    // After narrowing: the column's type is then the word the steps must fit beside it.
    if (opt.pack && graph::pack_row_delta(p)) ++r.packed;
    // After packing: the steps, if packed, are part of the word that must fit 24 bits.
    if (opt.split_words && graph::split_col_words(p)) ++r.split;
    if (opt.drop_loops) {
      const auto count_max = [&](graph::Arr prefix) {
        const auto& v = p.array(prefix).ints;
        std::int64_t m = 0;
        for (std::size_t i = 1; i < v.size(); ++i) m = std::max(m, v[i] - v[i - 1]);
        return m;
      };
      p.single_bmtb_round = p.grid >= p.n_bmtb;
      p.single_warp_round = count_max(graph::Arr::bmtb_first_bmw) <= p.threads / 32;
      p.single_thread_round = count_max(graph::Arr::bmw_first_bmt) <= 32;
    }
  }
  r.bytes_after = graph::stored_bytes(f);
  return r;
}

}  // namespace sparsetune::codegen
