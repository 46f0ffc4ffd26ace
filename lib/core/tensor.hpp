#pragma once
// Sparse tensors of any order in coordinate form, with the orderings SpTV needs:
// lexicographic sorts by a mode order, fibers (runs that differ only in one mode) and slices.
#include <cstdint>
#include <vector>

namespace sparsetune {

struct SparseTensor {
  std::vector<std::int64_t> dims;              // size of each mode
  std::vector<std::vector<std::int64_t>> idx;  // idx[mode][entry], 0-based
  std::vector<double> val;

  int order() const { return static_cast<int>(dims.size()); }
  std::int64_t nnz() const { return static_cast<std::int64_t>(val.size()); }
};

// The mode order that puts `mode` last and keeps the others ascending: sorting by it makes
// every mode-`mode` fiber a contiguous run.
std::vector<int> fiber_mode_order(int order, int mode);

// The mode order that puts `mode` first: sorting by it makes every slice of that mode contiguous.
std::vector<int> slice_mode_order(int order, int mode);

// The stable permutation that orders entries lexicographically by the modes in `mode_order` (a
// permutation of 0..order-1): entry perm[k] goes to position k. Radix passes over the packed
// coordinates, on every core for large tensors; throws Error on a negative index.
std::vector<std::int64_t> sorted_order(const SparseTensor& t, const std::vector<int>& mode_order);

// Sorts entries lexicographically by the modes in `mode_order` (a permutation of 0..order-1),
// stably; a tensor already in that order is left as it is.
void sort_by_modes(SparseTensor& t, const std::vector<int>& mode_order);

// True when the entries are in lexicographic order by `mode_order` (with `strict`, also without
// two equal coordinates).
bool is_sorted_by_modes(const SparseTensor& t, const std::vector<int>& mode_order,
                        bool strict = false);

// Sums entries with equal coordinates (tensor must be sorted by some full mode order);
// returns how many entries were merged away.
std::int64_t merge_duplicates(SparseTensor& t);

// A tensor as the readers return it: sorted lexicographically by mode 0, 1, ..., entries with
// equal coordinates summed; returns how many were merged away.
std::int64_t sort_and_merge(SparseTensor& t);

// Boundaries of mode-`mode` fibers in a tensor sorted by fiber_mode_order(order, mode):
// fiber f holds entries [ptr[f], ptr[f+1]).
std::vector<std::int64_t> fiber_ptr(const SparseTensor& sorted, int mode);

// The same for the entries taken in the order `perm` (entry perm[k] at position k; sorted so
// that every fiber is a run, e.g. by sorted_order): fiber f holds positions [ptr[f], ptr[f+1]).
// Found on every core for large tensors.
std::vector<std::int64_t> fiber_ptr(const SparseTensor& t, const std::vector<std::int64_t>& perm,
                                    int mode);

// True when two consecutive entries in the order `perm` have the same coordinates.
bool has_repeats(const SparseTensor& t, const std::vector<std::int64_t>& perm);

// Slices along `mode` of a tensor sorted by slice_mode_order(order, mode).
struct Slices {
  std::vector<std::int64_t> index;  // index along `mode` of each non-empty slice
  std::vector<std::int64_t> ptr;    // slice s holds entries [ptr[s], ptr[s+1])
};
Slices slices(const SparseTensor& sorted, int mode);

}  // namespace sparsetune
