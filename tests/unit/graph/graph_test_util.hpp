#pragma once
// Matrices for the graph tests: small shared ones and generated edge cases (empty rows and
// columns, no entries at all, one long row).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/convert.hpp"
#include "core/matrix.hpp"
#include "graph/graph.hpp"
#include "io/matrix_file.hpp"

namespace sparsetune::test {

// The largest difference of two vectors of one length (required).
inline double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double d = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

// The error validating a graph of these ops gives ("" when the graph is valid).
inline std::string rule_broken(const nlohmann::json& ops, const std::string& op = "spmv") {
  try {
    graph::Graph g = graph::graph_from_json(
        {{"format", "sparsetune-graph"}, {"version", 1}, {"op", op}, {"ops", ops}});
    graph::validate(g, "g.json");
  } catch (const graph::GraphError& e) {
    return e.what();
  }
  return "";
}

inline Csr64 from_triples(std::int64_t rows, std::int64_t cols,
                          const std::vector<std::tuple<std::int64_t, std::int64_t, double>>& t) {
  Coo64 c;
  c.rows = rows;
  c.cols = cols;
  for (const auto& [r, k, v] : t) c.row.push_back(r), c.col.push_back(k), c.val.push_back(v);
  return coo_to_csr<std::int64_t, std::int64_t>(c);
}

// Random pattern with a share of empty rows and columns and a few long rows.
inline Csr64 random_matrix(std::uint64_t seed, std::int64_t rows, std::int64_t cols, double density,
                           double empty_rows = 0.3) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<std::tuple<std::int64_t, std::int64_t, double>> t;
  for (std::int64_t r = 0; r < rows; ++r) {
    if (u(rng) < empty_rows) continue;
    const double d = u(rng) < 0.05 ? std::min(1.0, density * 20) : density;
    for (std::int64_t c = 0; c < cols; ++c)
      if (c % 7 != 3 && u(rng) < d) t.emplace_back(r, c, u(rng) * 2.0 - 1.0);
  }
  return from_triples(rows, cols, t);
}

inline std::vector<std::pair<std::string, Csr64>> edge_matrices() {
  std::vector<std::pair<std::string, Csr64>> m;
  m.emplace_back("empty 0x0", from_triples(0, 0, {}));
  m.emplace_back("no entries 7x5", from_triples(7, 5, {}));
  m.emplace_back("1x1", from_triples(1, 1, {{0, 0, 3.0}}));
  m.emplace_back("one column", from_triples(6, 1, {{0, 0, 1.0}, {2, 0, -2.0}, {5, 0, 4.0}}));
  std::vector<std::tuple<std::int64_t, std::int64_t, double>> longrow;
  for (std::int64_t c = 0; c < 300; ++c) longrow.emplace_back(40, c, 0.5 + c % 5);
  longrow.emplace_back(0, 0, 1.0);
  longrow.emplace_back(79, 299, -1.0);
  m.emplace_back("one long row, empty rows", from_triples(80, 300, longrow));
  m.emplace_back("random 60x45", random_matrix(7, 60, 45, 0.08));
  m.emplace_back("random 200x150", random_matrix(11, 200, 150, 0.03, 0.4));
  return m;
}

// Small matrices from the shared collection (read once).
inline const std::vector<std::pair<std::string, Csr64>>& shared_matrices() {
  static const std::vector<std::pair<std::string, Csr64>> m = [] {
    std::vector<std::pair<std::string, Csr64>> v;
    for (const char* name :
         {"chesapeake", "west0067", "impcol_a", "Erdos971", "lp_share1b", "rajat19"})
      v.emplace_back(name, io::read_matrix(std::string(SPARSETUNE_SHARED_DIR) + "/matrices/" +
                                           name + ".mtx.gz"));
    return v;
  }();
  return m;
}

inline std::vector<double> test_x(std::int64_t n) {
  std::vector<double> x(n);
  for (std::int64_t i = 0; i < n; ++i)
    x[i] = 1.0 + 0.25 * static_cast<double>((i * 7919) % 13) - 1.5;
  return x;
}

}  // namespace sparsetune::test
