#include "gen/generate.hpp"

#include <catch2/catch.hpp>
#include <cmath>

#include "checks.hpp"
#include "core/error.hpp"

using namespace sparsetune;
using namespace sparsetune::gen;

namespace {
GeneratedMatrix run(const std::string& kind, std::map<std::string, std::string> params,
                    std::uint64_t seed = 1) {
  return generate(GenSpec{kind, std::move(params), seed});
}
}  // namespace

TEST_CASE("every kind generates with small parameters, deterministically", "[gen][front]") {
  const std::map<std::string, std::map<std::string, std::string>> small = {
      {"stencil2d", {{"nx", "6"}}},
      {"stencil3d", {{"n", "4"}, {"points", "27"}}},
      {"kron", {{"scale", "8"}}},
      {"geometric", {{"n", "500"}}},
      {"erdos", {{"n", "500"}}},
      {"banded", {{"n", "300"}, {"fill", "0.5"}}},
      {"powerlaw", {{"n", "300"}}},
      {"blockdiag", {{"blocks", "10"}, {"block_size", "3,4"}, {"noise", "0.01"}}},
      {"tensor", {{"dims", "10,20,30"}, {"nnz", "500"}, {"skew", "1"}}},
      {"scenario", {{"name", "poisson"}}},
  };
  REQUIRE(generator_kinds().size() == small.size());
  for (const auto& kind : generator_kinds()) {
    INFO(kind.name);
    REQUIRE(small.count(kind.name));
    const auto a = run(kind.name, small.at(kind.name), 7);
    const auto b = run(kind.name, small.at(kind.name), 7);
    const auto c = run(kind.name, small.at(kind.name), 8);
    CHECK(a.is_tensor == kind.tensor);
    CHECK(a.resolved.at("seed") == "7");
    if (a.is_tensor) {
      CHECK(a.tensor.nnz() == 500);
      CHECK(a.tensor.idx == b.tensor.idx);
      CHECK(a.tensor.val == b.tensor.val);
      CHECK(a.tensor.idx != c.tensor.idx);
    } else {
      gen_test::require_well_formed(a.matrix);
      CHECK(a.matrix.nnz() > 0);
      CHECK(gen_test::identical(a.matrix, b.matrix));
      // Stencils and the fixed scenarios hold no randomness; every other kind changes with the
      // seed.
      if (kind.name.rfind("stencil", 0) != 0 && kind.name != "scenario")
        CHECK_FALSE(gen_test::identical(a.matrix, c.matrix));
    }
    // Every parameter with a default is reported back with the value used.
    for (const auto& p : kind.params)
      if (!p.default_value.empty()) CHECK(a.resolved.count(p.name) == 1);
  }
}

TEST_CASE("parameters reach the generators", "[gen][front]") {
  const auto s = run("stencil2d", {{"nx", "4"}, {"ny", "3"}});
  CHECK(s.matrix.nnz() == 46);
  CHECK(s.resolved.at("points") == "5");
  CHECK(run("stencil3d", {{"nx", "3"}, {"ny", "4"}, {"nz", "5"}, {"points", "27"}}).matrix.nnz() ==
        7 * 10 * 13);
  CHECK(run("banded", {{"n", "10"}, {"lower", "2"}, {"upper", "3"}}).matrix.nnz() == 51);
  CHECK(run("banded", {{"n", "10"}, {"bandwidth", "1"}}).matrix.nnz() == 28);
  CHECK(run("blockdiag", {{"n", "10"}, {"block-size", "4"}}).matrix.nnz() == 36);
  const auto k = run("kron", {{"scale", "6"}, {"edge_factor", "4"}, {"self_loops", "no"}});
  CHECK(k.matrix.rows == 64);
  CHECK(k.matrix.nnz() <= 256);
  CHECK(k.resolved.at("d") == "0.050000000000000044");  // 1 - 0.57 - 0.19 - 0.19 in doubles
  CHECK(k.resolved.at("a") == "0.57");
  const auto g = run("geometric", {{"n", "1000"}, {"degree", "6"}});
  CHECK(std::stod(g.resolved.at("radius")) == Approx(std::sqrt(6.0 / (999 * M_PI))));
  const auto e = run("erdos", {{"n", "100"}, {"degree", "100"}});
  CHECK(e.matrix.nnz() == 10000);
  CHECK(e.resolved.at("p") == "1");
  CHECK(run("tensor", {{"dims", "5,5"}, {"nnz", "25"}}).tensor.nnz() == 25);
  // Whole numbers in scientific notation, recorded as integers.
  const auto t = run("tensor", {{"dims", "50,50"}, {"nnz", "2.5e2"}});
  CHECK(t.tensor.nnz() == 250);
  CHECK(t.resolved.at("nnz") == "250");
  CHECK(run("banded", {{"n", "1e1"}, {"bandwidth", "1"}}).matrix.nnz() == 28);
  // The same in lists.
  CHECK(run("tensor", {{"dims", "1e1,2e1,3"}, {"nnz", "5"}}).resolved.at("dims") == "10,20,3");
  // A whole number past int64 is out of range, not "not an integer".
  CHECK_THROWS_WITH(run("kron", {{"scale", "6"}, {"edge_factor", "1e30"}}),
                    Catch::Contains("'edge_factor' must be in [1, "));
  CHECK_THROWS_WITH(run("tensor", {{"dims", "5,99999999999999999999,5"}}),
                    Catch::Contains("'dims' entries must be in [1, 2147483647]"));
}

TEST_CASE("bad parameters are refused with their name", "[gen][front]") {
  const auto refuses = [](const std::string& kind, std::map<std::string, std::string> params,
                          const std::string& name) {
    INFO(kind << " " << name);
    CHECK_THROWS_WITH(run(kind, std::move(params)), Catch::Contains("'" + name + "'"));
  };
  refuses("kron", {{"scal", "10"}}, "scal");
  refuses("kron", {{"scale", "31"}}, "scale");
  refuses("kron", {{"scale", "ten"}}, "scale");
  refuses("kron", {{"scale", "12x"}}, "scale");
  refuses("kron", {{"scale", "99999999999999999999999"}}, "scale");
  refuses("kron", {{"edge_factor", "0"}}, "edge_factor");
  refuses("kron", {{"a", "1.2"}}, "a");
  refuses("kron", {{"a", "nan"}}, "a");
  refuses("kron", {{"a", "0.5"}, {"b", "0.3"}, {"c", "0.3"}}, "c");
  refuses("kron", {{"permute", "maybe"}}, "permute");
  refuses("stencil2d", {{"points", "7"}}, "points");
  refuses("stencil2d", {{"nx", "0"}}, "nx");
  refuses("stencil3d", {{"n", "4"}, {"nx", "3"}}, "nx");
  refuses("geometric", {{"radius", "0"}}, "radius");
  refuses("geometric", {{"radius", "0.1"}, {"degree", "3"}}, "degree");
  refuses("erdos", {{"p", "-0.1"}}, "p");
  refuses("erdos", {{"n", "10"}, {"degree", "11"}}, "degree");
  refuses("banded", {{"fill", "2"}}, "fill");
  refuses("banded", {{"bandwidth", "-1"}}, "bandwidth");
  refuses("powerlaw", {{"min", "0"}}, "min");
  refuses("powerlaw", {{"n", "100"}, {"max", "101"}}, "max");
  refuses("powerlaw", {{"degree", "4"}, {"min", "2"}}, "min");
  refuses("powerlaw", {{"degree", "4"}, {"exponent", "1"}}, "exponent");
  refuses("blockdiag", {{"block_size", "4,,5"}}, "block_size");
  refuses("blockdiag", {{"block_size", "0"}}, "block_size");
  refuses("blockdiag", {{"blocks", "3"}, {"n", "10"}}, "n");
  refuses("blockdiag", {{"noise", "-1"}}, "noise");
  refuses("tensor", {{"dims", "10,x"}}, "dims");
  refuses("tensor", {{"dims", ""}}, "dims");
  refuses("tensor", {{"nnz", "-1"}}, "nnz");
  refuses("tensor", {{"nnz", "2.5"}}, "nnz");   // not whole
  refuses("tensor", {{"nnz", "1e40"}}, "nnz");  // beyond any integer
  refuses("tensor", {{"nnz", "1e"}}, "nnz");
  refuses("tensor", {{"skew", "-2"}}, "skew");
  CHECK_THROWS_WITH(run("mesh", {}), Catch::Contains("unknown kind 'mesh'"));
  CHECK_THROWS_AS(run("tensor", {{"dims", "3,3"}, {"nnz", "10"}}), Error);
}

TEST_CASE("gen scenario writes the scenario list's matrices by name", "[gen][front]") {
  CHECK(run("scenario", {{"name", "tall"}}).matrix.rows == 4000);
  const auto d = run("scenario", {{"name", "dense-row"}, {"dense_row", "300"}});
  CHECK(d.matrix.row_length(17) == 300);
  CHECK(d.resolved.at("dense_row") == "300");
  CHECK(run("scenario", {{"name", "0x0"}}).matrix.rows == 0);
  CHECK_THROWS_WITH(run("scenario", {{"name", "nope"}}),
                    Catch::Contains("unknown name 'nope'") && Catch::Contains("explicit-zeros"));
  CHECK_THROWS_WITH(run("scenario", {}), Catch::Contains("'name' is required"));
  // --dense-row belongs to dense-row, and its length is a column count (at most 2^31 - 1).
  CHECK_THROWS_WITH(run("scenario", {{"name", "1x1"}, {"dense_row", "5"}}),
                    Catch::Contains("not of '1x1'"));
  CHECK_THROWS_WITH(run("scenario", {{"name", "dense-row"}, {"dense_row", "2147483648"}}),
                    Catch::Contains("dense_row"));
}
