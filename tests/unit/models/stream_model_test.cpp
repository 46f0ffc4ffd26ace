// The stream-count model of IAP-SpTV §5.2 against hand-computed values and a brute-force minimum.
#include "models/stream_model.hpp"

#include <catch2/catch.hpp>
#include <cmath>

using namespace sparsetune::models;

TEST_CASE("the stream model follows eq. (20), (24) and (22)", "[models][streams]") {
  SECTION("computation dominates") {
    // TT_h2d = 4 ms, TT_d2h = 0.5 ms, CT = 10 ms, λ = 0.045 ms: n_opt = sqrt(4.5 / 0.045) = 10.
    const StreamCosts c{4e-3, 0.5e-3, 10e-3, 0.045e-3};
    CHECK(pipeline_time(c, 1) == Approx(4e-3 + 10e-3 + 0.5e-3 + 0.045e-3));
    CHECK(pipeline_time(c, 3) == Approx(4e-3 / 3 + 10e-3 + 0.5e-3 / 3 + 0.135e-3));
    CHECK(continuous_optimum(c) == Approx(10.0));
    CHECK(best_stream_count(c, 32) == 10);  // T(10) = 10.90 ms < T(9) = 10.905, T(11) = 10.904
    CHECK(best_stream_count(c, 4) == 4);    // capped by the concurrent streams
  }
  SECTION("transfer dominates") {
    const StreamCosts c{10e-3, 2e-3, 3e-3, 0.2e-3};  // sqrt((3 + 2) / 0.2) = 5
    CHECK(pipeline_time(c, 5) == Approx(10e-3 + 3e-3 / 5 + 2e-3 / 5 + 1e-3));
    CHECK(continuous_optimum(c) == Approx(5.0));
    CHECK(best_stream_count(c, 32) == 5);
  }
  SECTION("the integer answer is the brute-force minimum") {
    for (double lambda : {1e-6, 1e-5, 1e-4, 1e-3})
      for (double ct : {1e-4, 1e-3, 1e-2}) {
        const StreamCosts c{2e-3, 1e-3, ct, lambda};
        int best = 1;
        for (int n = 2; n <= 32; ++n)
          if (pipeline_time(c, n) < pipeline_time(c, best)) best = n;
        INFO("lambda " << lambda << ", CT " << ct);
        CHECK(best_stream_count(c, 32) == best);
      }
  }
  SECTION("no overhead: as many streams as allowed; nothing to move: one") {
    CHECK(best_stream_count({1e-3, 1e-3, 1e-3, 0.0}, 16) == 16);
    CHECK(best_stream_count({0.0, 0.0, 0.0, 1e-6}, 16) == 1);
  }
}

TEST_CASE("transfer time is bytes over bandwidth", "[models][streams]") {
  CHECK(transfer_s(50e9, 25.0) == Approx(2.0));
  CHECK(transfer_s(1e6, 0.0) == 0.0);
}
