// label_repeatability on hand-computed records: how much of one collection's oracle gain the
// best order of another collection keeps.
#include "models/row_order_repeat.hpp"

#include <catch2/catch.hpp>

using namespace sparsetune::models;

TEST_CASE("label_repeatability scores one collection's best order in the other",
          "[models][row-order]") {
  SECTION("two collections naming different best orders") {
    // A: order 1 best (8 us), B: order 2 best (8 us); each one's best runs at 9 us in the other.
    // Both ways: the oracle 10/8 = 1.25, the other's best 10/9; share (1/9) / (1/4) = 4/9.
    const auto r = label_repeatability({{{10, 8, 9}, {10, 9, 8}}});
    CHECK(r["records"] == 1);
    CHECK(r["pairs"] == 2);
    CHECK(r["same_best"].get<double>() == 0.0);
    CHECK(r["oracle_speedup"].get<double>() == Approx(1.25));
    CHECK(r["cross_speedup"].get<double>() == Approx(10.0 / 9.0));
    CHECK(r["share_of_oracle_gain"].get<double>() == Approx(4.0 / 9.0));
  }
  SECTION("the same best order keeps the whole gain; a record measured once is skipped") {
    const auto r = label_repeatability({{{10, 5, 9}, {20, 10, 19}}, {{10, 5, 9}}});
    CHECK(r["records"] == 1);
    CHECK(r["same_best"].get<double>() == 1.0);
    CHECK(r["oracle_speedup"].get<double>() == Approx(2.0));
    CHECK(r["share_of_oracle_gain"].get<double>() == Approx(1.0));
  }
  SECTION("an order timed in one collection only is not a best order") {
    // Order 1 is fastest in A but failed in B: A's best among orders timed in both is order 2.
    const auto r = label_repeatability({{{10, 4, 8, 9}, {10, -1, 9, 8}}});
    CHECK(r["pairs"] == 2);
    // A -> B: A's best (order 2) runs 9 in B, B's own best 8: 10/9 against 10/8.
    // B -> A: B's best (order 3) runs 9 in A, A's own best (timed in both) 8: the same.
    CHECK(r["cross_speedup"].get<double>() == Approx(10.0 / 9.0));
    CHECK(r["oracle_speedup"].get<double>() == Approx(1.25));
  }
  SECTION("nothing measured twice") {
    const auto r = label_repeatability({{{10, 8}}, {}});
    CHECK(r["records"] == 0);
    CHECK_FALSE(r.contains("share_of_oracle_gain"));
  }
}
