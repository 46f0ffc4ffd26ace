// Measurement arithmetic checked by hand: order statistics, byte and flop counts, tolerances.
#include "runtime/stats.hpp"

#include <catch2/catch.hpp>
#include <cmath>

#include "core/error.hpp"

using namespace sparsetune::runtime;

TEST_CASE("summaries of timings: median and spread") {
  const Stats odd = summarize({5, 1, 3, 2, 4});
  CHECK(odd.count == 5);
  CHECK(odd.median == 3);
  CHECK(odd.min == 1);
  CHECK(odd.max == 5);
  CHECK(odd.q1 == 2);
  CHECK(odd.q3 == 4);
  CHECK(odd.iqr() == 2);

  const Stats even = summarize({4, 1, 3, 2});
  CHECK(even.median == Approx(2.5));
  CHECK(even.q1 == Approx(1.75));  // 1 + 0.75·(2 - 1)
  CHECK(even.q3 == Approx(3.25));

  const Stats one = summarize({7});
  CHECK((one.median == 7 && one.min == 7 && one.max == 7 && one.iqr() == 0));

  std::vector<double> outlier(20, 1.0);
  outlier[7] = 100.0;  // one slow run moves the max, not the median
  const Stats o = summarize(outlier);
  CHECK(o.median == 1.0);
  CHECK(o.max == 100.0);

  CHECK_THROWS_AS(summarize({}), sparsetune::Error);
  CHECK_THROWS_AS(summarize({1.0, NAN}), sparsetune::Error);
}

TEST_CASE("bytes and flops an operation must move and do") {
  // 3×4 CSR with 5 non-zeros, 4-byte indices and f32 values:
  // row_ptr 4·4 = 16, col_idx + val 5·8 = 40, x 4·4 = 16, y 3·4 = 12.
  const OpCost v = spmv_cost(3, 4, 5, 4, 4);
  CHECK(v.bytes == 84);
  CHECK(v.flops == 10);
  // Same matrix, f64 values, n = 2: 16 + 5·12 + 4·2·8 + 3·2·8 = 188 bytes, 2·5·2 flops.
  const OpCost m = spmm_cost(3, 4, 5, 2, 4, 8);
  CHECK(m.bytes == 188);
  CHECK(m.flops == 20);
  // f16 values and B with an fp32 C: 16 + 5·6 + 4·2·2 + 3·2·4 = 86 bytes.
  const OpCost h = spmm_cost(3, 4, 5, 2, 4, 2, 4);
  CHECK(h.bytes == 86);
  CHECK(h.flops == 20);
  CHECK(spmm_cost(3, 4, 5, 2, 4, 2).bytes == 74);  // C of the values' type: 3·2·2
  // Order-3 tensor, 10 entries, mode size 7, 4 fibers, f32: 10·(3·4 + 4) + 7·4 + 4·4 = 204.
  const OpCost t = sptv_cost(3, 10, 7, 4, 4, 4);
  CHECK(t.bytes == 204);
  CHECK(t.flops == 20);
  CHECK(gflops(v, 1e-6) == Approx(10e-3));
  CHECK(gbytes_per_s(v, 1e-6) == Approx(84e-3));
  CHECK(gflops(v, 0.0) == 0.0);
}

TEST_CASE("error tolerances per data type") {
  CHECK(error_tolerance(DType::f32, 1) == 1e-5);
  CHECK(error_tolerance(DType::f64, 1) == 1e-12);
  CHECK(error_tolerance(DType::f16, 1) == 1e-2);
  // Long rows: 16·sqrt(10^6)·2^-24 ≈ 9.5e-4.
  CHECK(error_tolerance(DType::f32, 1000000) == Approx(16.0 * 1000.0 * std::ldexp(1.0, -24)));
  CHECK(error_tolerance(DType::f64, 1000000) == Approx(16.0 * 1000.0 * std::ldexp(1.0, -53)));
  CHECK(error_tolerance(DType::f32, 100) > error_tolerance(DType::f64, 100));
  CHECK(error_tolerance_tf32(64) == Approx(16.0 * 8.0 / 2048.0));  // 16·sqrt(64)·2^-11
  CHECK(error_tolerance_tf32(64) > error_tolerance(DType::f32, 64));
  CHECK(dtype_bytes(parse_dtype("f16")) == 2);
  CHECK(dtype_name(parse_dtype("f64")) == "f64");
  CHECK_THROWS_AS(parse_dtype("bf16"), sparsetune::Error);
}

TEST_CASE("output checks count unwritten entries and bound the error", "[runtime][stats]") {
  const std::vector<double> ref = {3, 4};
  auto exact = check_output({3, 4}, ref, 1e-6);
  CHECK(exact.error == 0.0);
  CHECK(exact.unwritten == 0);
  CHECK(exact.verified());
  // ||(0, 0.5)|| / ||(3, 4)|| = 0.1.
  auto off = check_output({3, 4.5}, ref, 0.05);
  CHECK(off.error == Approx(0.1));
  CHECK_FALSE(off.verified());
  CHECK(check_output({3, 4.5}, ref, 0.2).verified());
  auto hole = check_output({3, NAN}, ref, 1.0);
  CHECK(hole.unwritten == 1);
  CHECK_FALSE(hole.verified());
}

TEST_CASE("result JSON carries rates from the fewest bytes", "[runtime][stats]") {
  const auto cost = spmv_cost(10, 10, 20, 4, 4);
  const Stats t = summarize({2.0, 1.0, 3.0});  // ms
  const auto j = result_json(check_output({1}, {1}, 1e-6), t, cost, "n");
  CHECK(j.at("verified") == true);
  CHECK(j.at("time_ms").at("median") == 2.0);
  CHECK(j.at("gflops").get<double>() == Approx(cost.flops / 2e-3 / 1e9));
  CHECK(j.at("gbs").get<double>() == Approx(cost.bytes / 2e-3 / 1e9));
  CHECK(j.at("note") == "n");
  const auto nan = result_json(check_output({NAN}, {1}, 1e-6), t, cost, "");
  CHECK(nan.at("error").is_null());
  CHECK(nan.at("verified") == false);
}
