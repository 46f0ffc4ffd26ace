// run_pipeline's estimate of the time until an item is measured, which the search compares
// with the time left before starting a candidate: the longest preparation plus one longest
// measurement per item ahead of it, carried across batches.
#include "search/pipeline.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

using namespace sparsetune::search;

namespace {
Prepared fake(double seconds) {
  Prepared p;
  p.ok = true;
  p.seconds = seconds;  // what the preparation reports it took
  return p;
}
}  // namespace

TEST_CASE("pipeline: the first item of a batch is weighed with earlier batches' times",
          "[search][pipeline]") {
  PipelineTimes times{2.0, 1.0};
  std::vector<double> asked;
  const auto consumed = run_pipeline(
      3, 1,
      [&](double need) {
        asked.push_back(need);
        return need <= 2.5;  // less time left than one preparation and one measurement
      },
      [](std::size_t) { return fake(0.1); }, [](std::size_t, Prepared&) {}, &times);
  CHECK(consumed == 0);
  REQUIRE(asked.size() == 1);
  CHECK(asked[0] == Approx(3.0));  // 2.0 + 1.0 x (0 ahead + itself)
}

TEST_CASE("pipeline: items started but not measured count once each", "[search][pipeline]") {
  PipelineTimes times{0.5, 1.0};
  std::mutex mu;
  std::vector<double> asked;
  // One thread prepares while the consumer has not measured anything yet only if the consumer
  // is slow: make it wait for the producer to have asked three times.
  const auto consumed = run_pipeline(
      3, 1,
      [&](double need) {
        std::lock_guard lock(mu);
        asked.push_back(need);
        return true;
      },
      [](std::size_t) { return fake(0.5); },
      [&](std::size_t, Prepared&) {
        for (;;) {
          {
            std::lock_guard lock(mu);
            if (asked.size() == 3) break;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      },
      &times);
  CHECK(consumed == 3);
  REQUIRE(asked.size() == 3);
  // The first is asked with nothing ahead; the second and third while the first (then the first
  // two) are prepared but not measured, since the consumer waits for all three to be asked.
  CHECK(asked[0] == Approx(0.5 + 1.0 * 1));
  CHECK(asked[1] == Approx(0.5 + 1.0 * 2));
  CHECK(asked[2] == Approx(0.5 + 1.0 * 3));
}

TEST_CASE("pipeline: the longest times are kept for the next batch", "[search][pipeline]") {
  PipelineTimes times;
  const auto consumed = run_pipeline(
      2, 2, [](double) { return true; }, [](std::size_t i) { return fake(i == 0 ? 0.7 : 0.2); },
      [](std::size_t, Prepared&) { std::this_thread::sleep_for(std::chrono::milliseconds(20)); },
      &times);
  CHECK(consumed == 2);
  CHECK(times.prepare == Approx(0.7));
  CHECK(times.consume >= 0.02);  // sleep_for waits at least that long
}

TEST_CASE("pipeline: prepared plans waiting for their measurement stay bounded",
          "[search][pipeline]") {
  std::mutex mu;
  int waiting = 0, most = 0;
  const auto consumed = run_pipeline(
      40, 2, [](double) { return true; },
      [&](std::size_t) {
        std::lock_guard lock(mu);
        most = std::max(most, ++waiting);
        return fake(0.0);
      },
      [&](std::size_t, Prepared&) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a slow measurement
        std::lock_guard lock(mu);
        --waiting;
      });
  CHECK(consumed == 40);
  // Instant preparations would all be done before the fifth measurement without the bound.
  CHECK(most <= 4);
}
