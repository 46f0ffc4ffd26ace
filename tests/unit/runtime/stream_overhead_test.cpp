// λ's fit and its per-device cache (no GPU needed).
#include "runtime/stream_overhead.hpp"

#include <catch2/catch.hpp>
#include <fstream>

#include "test_support.hpp"

using namespace sparsetune::runtime;

TEST_CASE("lambda is the slope of time over stream count", "[runtime][streams]") {
  CHECK(fit_lambda({{1, 12.0}, {2, 17.0}, {4, 27.0}, {8, 47.0}}) == Approx(5.0));
  CHECK(fit_lambda({{4, 10.0}, {4, 11.0}}) == 0.0);  // one count: no slope
  CHECK(fit_lambda({{1, 20.0}, {8, 10.0}}) == 0.0);  // never negative
  CHECK(fit_lambda({}) == 0.0);
}

TEST_CASE("the stream overhead is cached per device", "[runtime][streams]") {
  sparsetune::testing::TempDir t("sparsetune-stream-cache");
  const auto path = t.file("sub/stream-overhead.json");
  CHECK(!cached_stream_overhead("H100", path));
  REQUIRE(cache_stream_overhead("H100", {4.5, 50.0, 48.0}, path));
  REQUIRE(cache_stream_overhead("H200", {3.0, 52.0, 51.0}, path));
  const auto h100 = cached_stream_overhead("H100", path);
  REQUIRE(h100);
  CHECK(h100->lambda_us == 4.5);
  CHECK(h100->d2h_gbs == 48.0);
  CHECK(cached_stream_overhead("H200", path)->h2d_gbs == 52.0);
  SECTION("a damaged cache is ignored, never an error") {
    std::ofstream(path) << "{ not json";
    CHECK(!cached_stream_overhead("H100", path));
    std::ofstream(path) << R"({"H100": {"lambda_us": -1, "h2d_gbs": 1, "d2h_gbs": 1}})";
    CHECK(!cached_stream_overhead("H100", path));
    CHECK(cache_stream_overhead("H100", {1.0, 2.0, 3.0}, path));
    CHECK(cached_stream_overhead("H100", path)->lambda_us == 1.0);
  }
}
