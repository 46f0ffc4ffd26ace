// The train/test split: matrices are the unit, it is the same for the same input and seed, every
// stratum of two or more matrices is on both sides, and the folds cover the training part.
#include "models/matrix_split.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "core/error.hpp"

using namespace sparsetune::models;

namespace {
std::vector<SplitItem> corpus() {
  std::vector<SplitItem> items;
  const char* families[] = {"HB", "SNAP", "gen:kron", "road"};
  for (int i = 0; i < 40; ++i)
    items.push_back(
        {"csr1-" + std::to_string(1000 + i * 7919), 100 + 37 * i * i, families[i % 4], ""});
  items.push_back({"csr1-alone", 5000, "Pajek", ""});
  items.push_back({"csr1-alone2", 90000, "NYPA", ""});
  return items;
}
}  // namespace

TEST_CASE("split: deterministic, by matrix, stratified", "[models]") {
  const auto items = corpus();
  SplitOptions o;
  o.seed = 11;
  const auto a = split_matrices(items, o);
  const auto b = split_matrices(items, o);
  CHECK(a.test == b.test);
  CHECK(a.fold == b.fold);
  CHECK(a.description == b.description);

  // The input's order does not matter: the split follows the fingerprints.
  auto reversed = items;
  std::reverse(reversed.begin(), reversed.end());
  const auto r = split_matrices(reversed, o);
  for (std::size_t i = 0; i < items.size(); ++i) CHECK(r.test[items.size() - 1 - i] == a.test[i]);

  // Every item on exactly one side; training items have a fold, test items none.
  std::size_t tests = 0;
  std::map<std::string, std::pair<int, int>> per;  // stratum -> (train, test)
  std::set<int> folds;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (a.test[i]) {
      ++tests;
      CHECK(a.fold[i] == -1);
      ++per[a.stratum[i]].second;
    } else {
      CHECK(a.fold[i] >= 0);
      CHECK(a.fold[i] < o.folds);
      folds.insert(a.fold[i]);
      ++per[a.stratum[i]].first;
    }
  }
  CHECK(folds.size() == static_cast<std::size_t>(o.folds));
  CHECK(tests > items.size() / 8);
  CHECK(tests < items.size() / 2);
  for (const auto& [stratum, n] : per)
    if (n.first + n.second >= 2) {
      INFO(stratum);
      CHECK(n.first >= 1);
      CHECK(n.second >= 1);
    }
  CHECK(a.description["test_matrices"] == tests);

  // Another seed draws another split.
  o.seed = 12;
  CHECK(split_matrices(items, o).test != a.test);
}

TEST_CASE("split: bad settings are refused", "[models]") {
  SplitOptions o;
  CHECK_THROWS_AS(split_matrices({{"a", 1, "", ""}}, o), sparsetune::Error);
  o.test_fraction = 1.0;
  CHECK_THROWS_AS(split_matrices(corpus(), o), sparsetune::Error);
}

TEST_CASE("split: a named test part", "[models]") {
  auto items = corpus();
  items[3].name = "road-3";  // known by name; the others by fingerprint
  SplitOptions o;
  o.seed = 11;
  o.held_out = {"csr1-1000", "road-3", "csr1-alone2", "not-in-the-database"};
  o.held_out_from = "earlier.json";
  const auto a = split_matrices(items, o);
  // Exactly items 0, 3 and 41 (csr1-1000, csr1-24757 by its name, csr1-alone2).
  std::set<std::size_t> tests;
  for (std::size_t i = 0; i < items.size(); ++i)
    if (a.test[i]) tests.insert(i);
  CHECK(tests == std::set<std::size_t>{0, 3, 41});
  CHECK(a.description["held_out_named"] == 4);
  CHECK(a.description["held_out_found"] == 3);
  CHECK(a.description["held_out_like"] == "earlier.json");
  CHECK(a.description["test_matrices"] == 3);
  CHECK(a.description["train_matrices"] == items.size() - 3);

  // The rest dealt into every fold.
  std::set<int> folds;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (a.test[i]) {
      CHECK(a.fold[i] == -1);
      continue;
    }
    CHECK(a.fold[i] >= 0);
    CHECK(a.fold[i] < o.folds);
    folds.insert(a.fold[i]);
  }
  CHECK(folds.size() == static_cast<std::size_t>(o.folds));

  const auto b = split_matrices(items, o);
  CHECK(a.test == b.test);
  CHECK(a.fold == b.fold);
  CHECK(a.description == b.description);

  // An item with a name is not named by its fingerprint.
  o.held_out = {"csr1-1000", "csr1-24757"};
  const auto c = split_matrices(items, o);
  CHECK(c.test[0]);
  CHECK_FALSE(c.test[3]);
  CHECK(c.description["held_out_found"] == 1);

  // Names that match no item, or every item, leave a part empty.
  o.held_out = {"not-in-the-database"};
  CHECK_THROWS_AS(split_matrices(items, o), sparsetune::Error);
  o.held_out.clear();
  for (const auto& it : items) o.held_out.insert(it.name.empty() ? it.fingerprint : it.name);
  CHECK_THROWS_AS(split_matrices(items, o), sparsetune::Error);
}

TEST_CASE("split: hold_out names matrices by their key", "[models]") {
  SplitOptions o;
  o.held_out = {"b"};
  const auto h = hold_out({{"a", 10}, {"b", 20}, {"c", 30}}, o);
  CHECK(h.test == std::map<std::string, bool>{{"a", false}, {"b", true}, {"c", false}});
  CHECK(h.split.description["held_out_found"] == 1);
}
