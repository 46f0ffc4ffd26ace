// [gpu] row-orders collect's timing: every one of the eleven orders measured and verified under
// the search's warp-per-row kernel (row-major, and with N_w = 32 on a one-wave grid) and under
// Alg. 1's output-stationary kernel (column-major B and C), on a shared matrix and one with empty
// rows, at a ragged N.
#include <catch2/catch.hpp>

#include "io/matrix_file.hpp"
#include "search/row_order_timings.hpp"
#include "test_support.hpp"
#include "unit/graph/graph_test_util.hpp"

using namespace sparsetune;

TEST_CASE("every row order is timed and verified under each kernel", "[gpu][row-order]") {
  const auto shared = testing::shared_dir().string() + "/matrices/";
  const std::pair<std::string, Csr64> matrices[] = {
      {"494_bus", io::read_matrix(shared + "494_bus.mtx.gz")},
      {"300x90, empty rows", test::random_matrix(3, 300, 90, 0.05, 0.3)}};
  struct Kernel {
    const char* kernel;
    int warps, ctas_per_sm;
  };
  for (const auto& k : {Kernel{"lanes", 0, 0}, Kernel{"lanes", 32, 2}, Kernel{"stationary", 0, 0}})
    for (const auto& [name, a] : matrices) {
      search::RowOrderTimingOptions o;
      o.kernel = k.kernel;
      o.warps = k.warps;
      o.ctas_per_sm = k.ctas_per_sm;
      o.n = {37};
      o.runs = 3;
      o.launch = {{"/proc/self/exe", runtime::kWorkerSubcommand}};
      INFO(name << ", kernel " << k.kernel << ", " << k.warps << " warps");
      const auto recs = search::time_row_orders(a, name, o);
      REQUIRE(recs.size() == 1);
      INFO(recs[0].notes);
      REQUIRE(recs[0].time_us.size() == 11);
      for (double t : recs[0].time_us) CHECK(t > 0);
      CHECK(recs[0].cusparse_us > 0);
    }
}

TEST_CASE("--n-square times every order at N = A's columns", "[gpu][row-order]") {
  const auto a =
      io::read_matrix(testing::shared_dir().string() + "/matrices/494_bus.mtx.gz");  // 494 x 494
  for (const char* kernel : {"lanes", "stationary"}) {
    search::RowOrderTimingOptions o;
    o.kernel = kernel;
    o.n_square = true;
    o.runs = 3;
    o.launch = {{"/proc/self/exe", runtime::kWorkerSubcommand}};
    INFO("kernel " << kernel);
    const auto recs = search::time_row_orders(a, "494_bus", o);
    REQUIRE(recs.size() == 1);
    CHECK(recs[0].n == 494);
    INFO(recs[0].notes);
    for (double t : recs[0].time_us) CHECK(t > 0);
  }
}
