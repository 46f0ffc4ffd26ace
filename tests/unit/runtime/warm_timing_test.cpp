// The warm measurement checked by hand: batch totals become per-run times, the "warm" object of a
// result and of a report, and the best cuSPARSE rate each way. The flushed fields stay as they
// were.
#include <catch2/catch.hpp>
#include <cmath>

#include "core/error.hpp"
#include "runtime/bench.hpp"
#include "runtime/stats.hpp"

using namespace sparsetune::runtime;

namespace {
// 2e6 flops and 1e7 bytes: at 2.5 ms that is 0.8 GFLOP/s and 4 GB/s.
OpCost round_cost() {
  OpCost c;
  c.flops = 2e6;
  c.bytes = 1e7;
  return c;
}

// Five batches of four runs: per run 2.5, 2, 3, 2.25, 2.75 ms.
WarmStats five_batches() { return summarize_warm({10, 8, 12, 9, 11}, 4); }
}  // namespace

TEST_CASE("warm batches: a run's time is its batch's over the runs in it", "[runtime][timing]") {
  const WarmStats w = five_batches();
  CHECK(w.runs_per_batch == 4);
  CHECK(w.per_run.count == 5);
  CHECK(w.per_run.median == 2.5);
  CHECK(w.per_run.min == 2.0);
  CHECK(w.per_run.max == 3.0);
  CHECK(w.per_run.q1 == 2.25);
  CHECK(w.per_run.q3 == 2.75);
  // One batch of one run is that run.
  const WarmStats one = summarize_warm({0.125}, 1);
  CHECK(one.per_run.median == 0.125);
  CHECK(one.per_run.count == 1);
  CHECK_THROWS_AS(summarize_warm({}, 4), sparsetune::Error);
  CHECK_THROWS_AS(summarize_warm({1.0}, 0), sparsetune::Error);
  CHECK_THROWS_AS(summarize_warm({1.0, NAN}, 2), sparsetune::Error);
}

TEST_CASE("the warm object of a worker's result", "[runtime][timing]") {
  const auto w = warm_json(five_batches(), round_cost());
  CHECK(w.at("median_us").get<double>() == Approx(2500.0));
  CHECK(w.at("min_us").get<double>() == Approx(2000.0));
  CHECK(w.at("max_us").get<double>() == Approx(3000.0));
  CHECK(w.at("gflops").get<double>() == Approx(0.8));
  CHECK(w.at("gbs").get<double>() == Approx(4.0));
  CHECK(w.at("bw_fraction").is_null());  // the worker does not know the bandwidth
  CHECK(w.at("batches") == 5);
  CHECK(w.at("runs_per_batch") == 4);

  // Flushed median 5 ms: every field outside "warm" is the flushed measurement.
  const Stats flushed = summarize({4.0, 5.0, 6.0});
  const auto check = check_output({1}, {1}, 1e-6);
  const auto r = result_json(check, flushed, five_batches(), round_cost(), "note");
  const auto plain = result_json(check, flushed, round_cost(), "note");
  auto without = r;
  without.erase("warm");
  CHECK(without == plain);
  CHECK(r.at("time_ms").at("median") == 5.0);
  CHECK(r.at("gflops").get<double>() == Approx(0.4));
  CHECK(r.at("warm") == w);
}

TEST_CASE("the parent reads the warm object and adds the bandwidth fraction", "[runtime][timing]") {
  const Stats flushed = summarize({4.0, 5.0, 6.0});
  auto j = result_json(check_output({1}, {1}, 1e-6), flushed, five_batches(), round_cost(), "");
  j["name"] = "csr-alg1";
  j["n"] = 1;
  j["dtype"] = "f32";
  const BaselineResult b = baseline_from_json(j, 10.0);  // 10 GB/s measured
  CHECK(b.time_ms.median == 5.0);
  CHECK(b.bandwidth_fraction == Approx(0.2));  // flushed: 2 GB/s of 10
  REQUIRE(b.warm.measured);
  CHECK(b.warm.median_us == Approx(2500.0));
  CHECK(b.warm.min_us == Approx(2000.0));
  CHECK(b.warm.max_us == Approx(3000.0));
  CHECK(b.warm.gflops == Approx(0.8));
  CHECK(b.warm.gbs == Approx(4.0));
  CHECK(b.warm.bandwidth_fraction == Approx(0.4));
  CHECK(b.warm.batches == 5);
  CHECK(b.warm.runs_per_batch == 4);

  BenchReport rep;
  rep.op = "spmv";
  rep.results = {b};
  const auto out = to_json(rep).at("results").at(0);
  CHECK(out.at("time_ms").at("median") == 5.0);
  CHECK(out.at("bandwidth_fraction").get<double>() == Approx(0.2));
  const auto& w = out.at("warm");
  CHECK(w.at("median_us").get<double>() == Approx(2500.0));
  CHECK(w.at("bw_fraction").get<double>() == Approx(0.4));
  CHECK(w.at("batches") == 5);
  CHECK(w.at("runs_per_batch") == 4);
  // Read back, the report's object gives the same result.
  const WarmResult again = warm_from_json(w, 10.0);
  CHECK(again.median_us == b.warm.median_us);
  CHECK(again.bandwidth_fraction == Approx(0.4));

  // Unknown bandwidth: no fraction rather than a zero one.
  CHECK(to_json(baseline_from_json(j, 0.0).warm).at("bw_fraction").is_null());
}

TEST_CASE("a result without a warm measurement says so", "[runtime][timing]") {
  auto j = result_json(check_output({1}, {1}, 1e-6), summarize({1.0}), round_cost(), "");
  const BaselineResult b = baseline_from_json(j, 10.0);
  CHECK_FALSE(b.warm.measured);
  CHECK(to_json(b.warm).is_null());
  CHECK_FALSE(warm_from_json(nullptr, 10.0).measured);
  BenchReport rep;
  rep.results = {b};
  CHECK(to_json(rep).at("results").at(0).at("warm").is_null());
}

TEST_CASE("the best cuSPARSE rate, flushed and warm", "[runtime][timing]") {
  auto result = [](const std::string& status, bool verified, double gflops, double warm) {
    BaselineResult b;
    b.status = status;
    b.verified = verified;
    b.gflops = gflops;
    b.warm.measured = warm > 0;
    b.warm.gflops = warm;
    return b;
  };
  const std::vector<BaselineResult> rs = {
      result("ok", true, 5, 7),                                  // best warm
      result("ok", true, 6, 6.5),                                // best flushed
      result("ok", false, 100, 100),                             // wrong answer: never counts
      result("failed", false, 50, 0), result("ok", true, 3, 0),  // no warm measurement
  };
  CHECK(best_verified_gflops(rs, false) == 6);
  CHECK(best_verified_gflops(rs, true) == 7);
  CHECK(best_verified_gflops({}, false) == 0);
  CHECK(best_verified_gflops({result("ok", true, 3, 0)}, true) == 0);
}

TEST_CASE("slow operations get shorter warm batches", "[runtime][timing]") {
  // 5 batches share 1000 ms: 200 ms a batch.
  CHECK(warm_runs_per_batch(20, 0.05, 5) == 20);  // 1 ms a batch
  CHECK(warm_runs_per_batch(20, 10.0, 5) == 20);  // exactly 200 ms a batch
  CHECK(warm_runs_per_batch(20, 40.0, 5) == 5);   // 200 / 40
  CHECK(warm_runs_per_batch(20, 30.0, 5) == 6);   // 200 / 30 rounded down
  CHECK(warm_runs_per_batch(20, 500.0, 5) == 1);  // never none
  CHECK(warm_runs_per_batch(3, 0.0, 5) == 3);
  CHECK(warm_runs_per_batch(0, 1.0, 5) == 1);
}

TEST_CASE("an SpTV baseline's time with transfers reaches the report", "[runtime][sptv]") {
  auto j = result_json(check_output({1}, {1}, 1e-6), summarize({1.0}), round_cost(), "");
  j["name"] = "coo-atomic";
  j["with_transfers_ms"] = {{"median", 3.5}, {"min", 3.0}, {"max", 4.0},        {"q1", 3.25},
                            {"q3", 3.75},    {"runs", 20}, {"h2d_bytes", 1200}, {"d2h_bytes", 80}};
  const BaselineResult b = baseline_from_json(j, 10.0);
  CHECK(b.with_transfers_ms.median == 3.5);
  CHECK(b.with_transfers_ms.count == 20);
  CHECK(b.h2d_bytes == 1200);
  BenchReport rep;
  rep.op = "sptv";
  rep.results = {b};
  const auto out = to_json(rep).at("results").at(0).at("with_transfers_ms");
  CHECK(out.at("median") == 3.5);
  CHECK(out.at("q3") == 3.75);
  CHECK(out.at("runs") == 20);
  CHECK(out.at("h2d_bytes") == 1200);
  CHECK(out.at("d2h_bytes") == 80);
  SECTION("a baseline timed without transfers has no such object") {
    j.erase("with_transfers_ms");
    rep.results = {baseline_from_json(j, 10.0)};
    CHECK_FALSE(to_json(rep).at("results").at(0).contains("with_transfers_ms"));
  }
}
