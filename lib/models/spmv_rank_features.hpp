#pragma once
// The input row of the SpMV ranking model: the matrix's features (every group matrix_features
// computes, named "group.name" as the tuning database stores them), the value type, and a
// descriptor of one candidate operator graph: how many operators and parts it has, how often
// each registered operator occurs, and the first occurrence's value of each of their scalar
// parameters (-1 when the graph has no such operator; a list parameter gives its length), then
// its launch geometry estimated from both (models/launch_estimate.hpp).
// The names follow the code: a new feature or operator or parameter changes the list. A ranking
// model reads its inputs by name (models/model_file.hpp, feature_columns): inputs added after it
// was trained are left out of its rows, and it is stale only when it reads one that is gone.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace sparsetune::models {

// Every input's name, in the row's order.
const std::vector<std::string>& spmv_rank_feature_names();

// The row for one candidate. `matrix_features` is a JSON object {"group.name": value} (the
// tuning database's matrix row); a missing or non-numeric feature throws Error naming `source`.
std::vector<double> spmv_rank_row(const nlohmann::json& matrix_features, const std::string& dtype,
                                  const graph::Graph& candidate, const std::string& source);

// The matrix part alone (its first values), and the rest for one candidate: predicting many
// candidates of one matrix reads the matrix's features once.
std::vector<double> spmv_rank_matrix_part(const nlohmann::json& matrix_features,
                                          const std::string& dtype, const std::string& source);
void append_graph_part(std::vector<double>& row, const graph::Graph& candidate);
// How many values the matrix part has (the level booster's inputs, models/spmv_ranker.hpp).
std::size_t spmv_rank_matrix_width();
std::size_t spmm_rank_matrix_width();

// SpMM's ranking ("spmm-rank") reads the same row with log2(n) after the matrix part: B's column
// count changes what a graph's column tile and lanes are worth.
const std::vector<std::string>& spmm_rank_feature_names();
std::vector<double> spmm_rank_matrix_part(const nlohmann::json& matrix_features,
                                          const std::string& dtype, std::int64_t n,
                                          const std::string& source);

// The fewest microseconds one SpMM (C = A B, n columns) can take: CSR, B and C once, at 3000 GB/s.
double spmm_floor_us(std::int64_t rows, std::int64_t cols, std::int64_t nnz, std::int64_t n,
                     const std::string& dtype);

// The fewest microseconds one SpMV can take: the bytes it must move (CSR with 32-bit indices, x
// and y once, as runtime::spmv_cost counts them) at 3000 GB/s. The ranking's level booster
// predicts log(fastest / floor), so its target has the matrix's size taken out.
double spmv_floor_us(std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                     const std::string& dtype);

}  // namespace sparsetune::models
