#include "models/launch_estimate.hpp"

#include <catch2/catch.hpp>
#include <cmath>

#include "graph/graph.hpp"
#include "models/spmv_rank_features.hpp"

namespace models = sparsetune::models;

namespace {
// Parsed, not validated: the estimate reads only the mapping's parameters.
sparsetune::graph::Graph parse_graph(const std::string& text, const char*) {
  return sparsetune::graph::graph_from_json(nlohmann::json::parse(text));
}

sparsetune::graph::Graph segmented_coo(int threads) {
  return parse_graph(R"({"format":"sparsetune-graph","op":"spmv","ops":[{"op":"COMPRESS"},
    {"op":"BMT_NNZ_BLOCK","nnz":1},{"op":"SET_RESOURCES","threads":)" +
                         std::to_string(threads) + R"(},{"op":"THREAD_BITMAP_RED"},
    {"op":"WARP_SEG_RED"},{"op":"GMEM_ATOM_RED"}],"version":1})",
                     "test");
}
}  // namespace

TEST_CASE("launch estimate of a thread-per-entry kernel, by hand", "[models]") {
  // A 27-point stencil of 27^3 rows: 493039 entries, one per thread.
  const auto small = models::estimate_launch(segmented_coo(32), 19683, 493039);
  CHECK(small.threads == 32);
  CHECK(small.blocks == 15408);  // ceil(493039 / 32)
  // 32 blocks of 32 threads per SM: half its 2048 threads.
  CHECK(small.occupancy_cap == Approx(0.5));
  CHECK(small.waves == Approx(15408.0 / (132 * 32)));
  const auto big = models::estimate_launch(segmented_coo(192), 19683, 493039);
  CHECK(big.blocks == 2568);  // ceil(493039 / 192)
  // floor(2048 / 192) = 10 blocks per SM: 1920 threads.
  CHECK(big.occupancy_cap == Approx(1920.0 / 2048));
  CHECK(big.waves == Approx(2568.0 / 1320));
  const auto f = models::launch_features(small);
  REQUIRE(f.size() == models::launch_feature_names().size());
  CHECK(f[0] == Approx(std::log2(15408.0)));
}

TEST_CASE("launch estimate counts blocks at the coarsest level cut", "[models]") {
  // A warp per row, four warps a block (128 threads by default).
  const auto warp = parse_graph(R"({"format":"sparsetune-graph","op":"spmv","ops":[
    {"op":"COMPRESS"},{"op":"BMW_ROW_BLOCK","rows":1},{"op":"WARP_TOTAL_RED"},
    {"op":"GMEM_ATOM_RED"}],"version":1})",
                                "test");
  const auto w = models::estimate_launch(warp, 1000, 5000);
  CHECK(w.threads == 128);
  CHECK(w.blocks == 250);
  CHECK(w.occupancy_cap == Approx(1.0));
  // Thread blocks of up to 64 entries each: the entries decide, not the rows.
  const auto packed = parse_graph(R"({"format":"sparsetune-graph","op":"spmv","ops":[
    {"op":"COMPRESS"},{"op":"BMTB_ROW_BLOCK","max_nnz":64},{"op":"BMT_ROW_BLOCK","rows":1},
    {"op":"THREAD_TOTAL_RED"},{"op":"SHMEM_TOTAL_RED"},{"op":"GMEM_ATOM_RED"}],"version":1})",
                                  "test");
  CHECK(models::estimate_launch(packed, 1000, 6400).blocks == 100);
  // A graph that cuts nothing: the blocks are unknown.
  const auto plain = parse_graph(
      R"({"format":"sparsetune-graph","op":"spmv","ops":[{"op":"COMPRESS"}],"version":1})", "test");
  const auto u = models::estimate_launch(plain, 1000, 6400);
  CHECK(u.blocks == -1);
  CHECK(u.waves == -1);
  CHECK(models::launch_features(u)[0] == -1);
}

TEST_CASE("the ranking's row ends with the launch estimate", "[models]") {
  const auto& names = models::spmv_rank_feature_names();
  const auto& launch = models::launch_feature_names();
  REQUIRE(names.size() > launch.size());
  for (std::size_t k = 0; k < launch.size(); ++k)
    CHECK(names[names.size() - launch.size() + k] == launch[k]);
}
