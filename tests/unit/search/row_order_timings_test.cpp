// The Ns `row-orders collect` times a matrix at: the given ones, or with --n-square the matrix's
// own column count (the paper's setting), refused for a non-square or too large matrix.
#include "search/row_order_timings.hpp"

#include <catch2/catch.hpp>

#include "core/error.hpp"

using namespace sparsetune;

TEST_CASE("row-order timing Ns: the given list, or N = A's columns with --n-square",
          "[search][row-order]") {
  search::RowOrderTimingOptions o;
  o.n = {32, 128};
  CHECK(search::row_order_ns(o, 700, 90, "m") == std::vector<std::int64_t>{32, 128});
  o.n_square = true;
  CHECK(search::row_order_ns(o, 23133, 23133, "m") == std::vector<std::int64_t>{23133});
  CHECK(search::row_order_ns(o, 32768, 32768, "m") == std::vector<std::int64_t>{32768});
  CHECK_THROWS_WITH(search::row_order_ns(o, 700, 90, "lp.mtx"), Catch::Contains("lp.mtx") &&
                                                                    Catch::Contains("square") &&
                                                                    Catch::Contains("700 x 90"));
  CHECK_THROWS_WITH(search::row_order_ns(o, 32769, 32769, "big.mtx"),
                    Catch::Contains("big.mtx") && Catch::Contains("32769 x 32769"));
  // With --n-square the default --n list is not needed.
  o.n.clear();
  CHECK_NOTHROW(search::check_row_order_options(o));
  o.n_square = false;
  CHECK_THROWS_WITH(search::check_row_order_options(o), Catch::Contains("no N given"));
}
