#include "models/matrix_split.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "core/error.hpp"

namespace sparsetune::models {

namespace {

std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A seeded hash of a fingerprint: the matrices' order within a stratum.
std::uint64_t seeded_hash(const std::string& fp, std::uint64_t seed) {
  std::uint64_t h = 0xcbf29ce484222325ull ^ mix(seed);
  for (unsigned char c : fp) h = (h ^ c) * 0x100000001b3ull;
  return mix(h);
}

}  // namespace

MatrixSplit split_matrices(const std::vector<SplitItem>& items, const SplitOptions& opt) {
  const bool named = !opt.held_out.empty();
  if (!named && !(opt.test_fraction > 0 && opt.test_fraction < 1))
    throw Error("split: the test fraction must be between 0 and 1");
  if (opt.nnz_bins < 1 || opt.folds < 2) throw Error("split: needs 1+ nnz bins and 2+ folds");
  const std::size_t n = items.size();
  if (n < 2) throw Error("split: needs at least two matrices (got " + std::to_string(n) + ")");

  std::vector<std::uint64_t> hash(n);
  for (std::size_t i = 0; i < n; ++i) hash[i] = seeded_hash(items[i].fingerprint, opt.seed);
  // nnz quantile by rank (ties broken by the hash, so equal sizes still spread over bins).
  std::vector<std::size_t> by_nnz(n);
  std::iota(by_nnz.begin(), by_nnz.end(), 0);
  std::sort(by_nnz.begin(), by_nnz.end(), [&](std::size_t x, std::size_t y) {
    return items[x].nnz != items[y].nnz ? items[x].nnz < items[y].nnz : hash[x] < hash[y];
  });
  std::vector<int> bin(n);
  for (std::size_t r = 0; r < n; ++r)
    bin[by_nnz[r]] = static_cast<int>(r * static_cast<std::size_t>(opt.nnz_bins) / n);

  MatrixSplit s;
  s.test.assign(n, false);
  s.fold.assign(n, -1);
  s.stratum.resize(n);
  std::map<std::string, std::vector<std::size_t>> strata;
  for (std::size_t i = 0; i < n; ++i) {
    s.stratum[i] = "nnz q" + std::to_string(bin[i] + 1) + "/" +
                   (items[i].family.empty() ? std::string("unknown") : items[i].family);
    strata[s.stratum[i]].push_back(i);
  }
  auto hash_order = [&](std::vector<std::size_t>& v) {
    std::sort(v.begin(), v.end(), [&](std::size_t x, std::size_t y) {
      return hash[x] != hash[y] ? hash[x] < hash[y] : items[x].fingerprint < items[y].fingerprint;
    });
  };
  std::size_t found = 0;  // items whose name opt.held_out lists
  if (named) {
    for (std::size_t i = 0; i < n; ++i) {
      const std::string& key = items[i].name.empty() ? items[i].fingerprint : items[i].name;
      s.test[i] = opt.held_out.count(key) > 0;
      found += s.test[i];
    }
    if (found == 0)
      throw Error("split: none of the " + std::to_string(opt.held_out.size()) +
                  " matrices named to be held out is in the database");
    if (found == n)
      throw Error("split: all " + std::to_string(n) +
                  " matrices are named to be held out: none is left to train on");
  } else {
    std::vector<std::size_t> pool;  // matrices alone in their stratum
    for (auto& [name, members] : strata) {
      if (members.size() < 2) {
        pool.push_back(members.front());
        continue;
      }
      hash_order(members);
      const auto m = static_cast<long>(members.size());
      const long t = std::clamp(std::lround(static_cast<double>(m) * opt.test_fraction), 1L, m - 1);
      for (long k = 0; k < t; ++k) s.test[members[k]] = true;
    }
    // The pool in nnz order: systematic sampling keeps its sizes spread over both parts; where
    // in each stride the test matrix falls comes from the seed.
    std::sort(pool.begin(), pool.end(), [&](std::size_t x, std::size_t y) {
      return bin[x] != bin[y] ? bin[x] < bin[y] : hash[x] < hash[y];
    });
    const double phase = static_cast<double>(mix(opt.seed) % 1000) / 1000.0;
    for (std::size_t k = 0; k < pool.size(); ++k) {
      const double a = static_cast<double>(k) * opt.test_fraction + phase;
      const double b = static_cast<double>(k + 1) * opt.test_fraction + phase;
      if (std::floor(b) > std::floor(a)) s.test[pool[k]] = true;
    }
    // Never an empty part.
    if (std::none_of(s.test.begin(), s.test.end(), [](bool t) { return t; }))
      s.test[by_nnz[n / 2]] = true;
    if (std::all_of(s.test.begin(), s.test.end(), [](bool t) { return t; }))
      s.test[by_nnz[n / 2]] = false;
  }

  // Folds: the training matrices stratum by stratum (hash order within), dealt round-robin.
  std::vector<std::size_t> train;
  for (auto& [name, members] : strata) {
    hash_order(members);
    for (std::size_t i : members)
      if (!s.test[i]) train.push_back(i);
  }
  const int folds = std::min<int>(opt.folds, static_cast<int>(train.size()));
  for (std::size_t k = 0; k < train.size(); ++k)
    s.fold[train[k]] = folds > 0 ? static_cast<int>(k % static_cast<std::size_t>(folds)) : 0;

  nlohmann::json per = nlohmann::json::object();
  for (const auto& [name, members] : strata) {
    int te = 0;
    for (std::size_t i : members) te += s.test[i];
    per[name] = {{"train", static_cast<int>(members.size()) - te}, {"test", te}};
  }
  std::size_t tests = std::count(s.test.begin(), s.test.end(), true);
  s.description = {{"unit", "matrix"}};
  if (named) {
    s.description["method"] =
        "named: the test part is the matrices a given list holds out; the training part dealt "
        "into folds stratum by stratum (nnz quantile and family), in the order of a seeded hash "
        "of the fingerprint";
    s.description["held_out_named"] = opt.held_out.size();
    s.description["held_out_found"] = found;
    if (!opt.held_out_from.empty()) s.description["held_out_like"] = opt.held_out_from;
  } else {
    s.description["method"] =
        "stratified by nnz quantile and family; within a stratum ordered by a seeded hash of the "
        "fingerprint; strata of one matrix pooled in nnz order and sampled systematically";
    s.description["test_fraction"] = opt.test_fraction;
  }
  s.description["nnz_bins"] = opt.nnz_bins;
  s.description["seed"] = opt.seed;
  s.description["folds"] = folds;
  s.description["train_matrices"] = n - tests;
  s.description["test_matrices"] = tests;
  s.description["strata"] = per;
  return s;
}

HeldOut hold_out(const std::map<std::string, std::int64_t>& nnz_of, const SplitOptions& opt) {
  std::vector<SplitItem> items;
  for (const auto& [name, nnz] : nnz_of) items.push_back({name, nnz, "", name});
  HeldOut h;
  h.split = split_matrices(items, opt);
  for (std::size_t i = 0; i < items.size(); ++i) h.test[items[i].fingerprint] = h.split.test[i];
  return h;
}

}  // namespace sparsetune::models
