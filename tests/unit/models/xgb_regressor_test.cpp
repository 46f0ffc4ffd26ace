#include "models/xgb_regressor.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "models/xgb_classifier.hpp"

using sparsetune::models::XgbRegressor;

namespace {
double f(double x0, double x1) { return x0 * x0 + 3.0 * x1; }
}  // namespace

TEST_CASE("xgboost interpolates y = x0^2 + 3 x1 from a coarse grid", "[models]") {
  // Train on the integer grid, check the half-way points in between (never seen).
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (int a = 0; a <= 10; ++a)
    for (int b = 0; b <= 10; ++b) x.push_back({double(a), double(b)}), y.push_back(f(a, b));
  XgbRegressor m({200, 6, 0.3, 1.0, 7, 1});
  m.fit(x, y);
  REQUIRE(m.fitted());
  const auto fit = m.predict(x);
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(fit[i] == Approx(y[i]).margin(1.0));

  std::vector<std::vector<double>> q;
  std::vector<double> truth;
  for (double a = 0.5; a < 10; a += 1)
    for (double b = 0.5; b < 10; b += 1) q.push_back({a, b}), truth.push_back(f(a, b));
  const auto p = m.predict(q);
  double mae = 0, worst = 0;
  for (std::size_t i = 0; i < q.size(); ++i) {
    mae += std::abs(p[i] - truth[i]) / q.size();
    worst = std::max(worst, std::abs(p[i] - truth[i]));
  }
  // A tree model answers with a neighbouring grid value: off by at most one step of x0^2
  // (2 x0 + 1, 19 at x0 = 9) plus one of 3 x1, a tenth of y's range (130) on average.
  CHECK(mae < 8.0);
  CHECK(worst < 24.0);
  // The best point of the fine grid is predicted where the function peaks.
  std::size_t best = 0;
  for (std::size_t i = 0; i < q.size(); ++i)
    if (p[i] > p[best]) best = i;
  CHECK(q[best][0] >= 8.5);
  CHECK(q[best][1] >= 7.5);
  // Monotone in each variable, as the function is, at the grid's ends.
  CHECK(m.predict({{9, 5}})[0] > m.predict({{1, 5}})[0] + 50);
  CHECK(m.predict({{5, 9}})[0] > m.predict({{5, 1}})[0]);
}

TEST_CASE("xgboost wrapper rejects bad tables", "[models]") {
  XgbRegressor m;
  CHECK_THROWS_AS(m.predict({{1.0}}), sparsetune::Error);
  CHECK_THROWS_AS(m.fit({}, {}), sparsetune::Error);
  CHECK_THROWS_AS(m.fit({{1, 2}, {3}}, {1, 2}), sparsetune::Error);
  CHECK_THROWS_AS(m.fit({{1, NAN}}, {1}), sparsetune::Error);
  m.fit({{1, 2}, {3, 4}}, {1, 2});
  CHECK_THROWS_AS(m.predict({{1, 2, 3}}), sparsetune::Error);
  // Same data, same seed: same model.
  XgbRegressor a, b;
  a.fit({{0}, {1}, {2}, {3}}, {0, 1, 4, 9});
  b.fit({{0}, {1}, {2}, {3}}, {0, 1, 4, 9});
  CHECK(a.predict({{1.5}})[0] == b.predict({{1.5}})[0]);
}

TEST_CASE("xgboost average predicts the mean of its models", "[models]") {
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (int a = 0; a <= 8; ++a)
    for (int b = 0; b <= 8; ++b) x.push_back({double(a), double(b)}), y.push_back(f(a, b));
  // Row and column sampling under three seeds: three different models.
  std::vector<XgbRegressor> bag;
  for (std::uint64_t seed : {1, 2, 3}) {
    XgbRegressor m({40, 4, 0.3, 1.0, seed, 1, 0.6, 0.5});
    m.fit(x, y);
    bag.push_back(std::move(m));
  }
  const std::vector<std::vector<double>> q = {{0.5, 0.5}, {3.2, 7.7}, {8.9, 1.1}, {4, 4}};
  std::vector<std::vector<double>> each;
  for (const auto& m : bag) each.push_back(m.predict(q));
  REQUIRE(each[0] != each[1]);  // else a mean could not be told from any one of them

  const XgbRegressor mean = XgbRegressor::average(bag);
  const auto p = mean.predict(q);
  for (std::size_t i = 0; i < q.size(); ++i)
    CHECK(p[i] == Approx((each[0][i] + each[1][i] + each[2][i]) / 3).epsilon(1e-5).margin(1e-4));
  // Saved and loaded again, the mean stays the mean.
  const auto back = XgbRegressor::load(mean.save(), 2, "test").predict(q);
  for (std::size_t i = 0; i < q.size(); ++i) CHECK(back[i] == Approx(p[i]));
  // A bag of one is that model.
  std::vector<XgbRegressor> one;
  one.push_back(std::move(bag[1]));
  CHECK(XgbRegressor::average(one).predict(q) == each[1]);
  // No mean of nothing, of an unfitted model, or of models of different widths.
  CHECK_THROWS_AS(XgbRegressor::average({}), sparsetune::Error);
  one.emplace_back();
  CHECK_THROWS_AS(XgbRegressor::average(one), sparsetune::Error);
  one.back().fit({{0}, {1}, {2}}, {0, 1, 4});
  CHECK_THROWS_WITH(XgbRegressor::average(one), Catch::Contains("different widths"));
}

TEST_CASE("a saved model whose trees do not form trees is refused, not loaded", "[models]") {
  using nlohmann::json;
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (int a = 0; a < 8; ++a) x.push_back({double(a), double(a % 3)}), y.push_back(a * a);
  XgbRegressor m({5, 3, 0.3, 1.0, 7, 1});
  m.fit(x, y);
  const json good = json::parse(m.save());
  CHECK(XgbRegressor::load(good.dump(), 2, "good").predict(x) == m.predict(x));
  // The same bytes in UBJSON, as the rankings are shipped.
  CHECK(XgbRegressor::load(m.save_binary(), 2, "good.ubj").predict(x) == m.predict(x));
  const auto edit = [&](const std::function<void(json&)>& f) {
    json j = good;
    f(j["learner"]["gradient_booster"]["model"]["trees"][0]);
    return j;
  };
  // Each fault in JSON text, and in UBJSON with and without typed arrays (the walker that reads
  // UBJSON is not the JSON parser).
  const auto refused = [&](const json& j, const std::string& name, const std::string& why) {
    std::vector<std::uint8_t> typed, plain;
    json::to_ubjson(j, typed, true, true);
    json::to_ubjson(j, plain, false, false);
    for (const auto& [bytes, as] :
         {std::pair{j.dump(), name + ".json"},
          std::pair{std::string(typed.begin(), typed.end()), name + ".typed.ubj"},
          std::pair{std::string(plain.begin(), plain.end()), name + ".ubj"}}) {
      INFO(as);
      CHECK_THROWS_WITH(XgbRegressor::load(bytes, 2, as),
                        Catch::Contains(as) && Catch::Contains(why));
    }
  };
  // A child that points back at the root: XGBoost would walk the loop forever.
  refused(edit([](json& t) {
            t["left_children"][1] = 0;
            t["right_children"][1] = 0;
          }),
          "loop", "tree 0: node 1 links to node 0, which is not a new node");
  refused(edit([](json& t) { t["left_children"][0] = 999; }), "far", "links to node 999");
  refused(edit([](json& t) { t["split_indices"][0] = 7; }), "feature", "splits on feature 7 of 2");
  refused(edit([](json& t) { t["right_children"].erase(0); }), "short", "different lengths");
  refused(edit([](json& t) { t.erase("split_indices"); }), "lacks", "split");
  refused(edit([](json& t) { t["left_children"][0] = 1.5; }), "float", "");
  // The valid model through nlohmann's UBJSON, typed and not: the walker passes both forms
  // (XGBoost's own reader may still refuse a form it never writes, a typed object).
  for (const bool use_type : {false, true}) {
    std::vector<std::uint8_t> u;
    json::to_ubjson(good, u, use_type, use_type);
    try {
      XgbRegressor::load(std::string(u.begin(), u.end()), 2, "u.ubj");
    } catch (const sparsetune::Error& e) {
      CHECK_THAT(e.what(), !Catch::Contains("not a valid XGBoost model"));
    }
  }
  // A UBJSON model cut short is refused by the walker, before XGBoost reads it.
  const std::string ubj = m.save_binary();
  CHECK_THROWS_WITH(XgbRegressor::load(ubj.substr(0, ubj.size() / 2), 2, "cut.ubj"),
                    Catch::Contains("cut.ubj") && Catch::Contains("cut off"));
}

TEST_CASE("a classifier of another number of classes is refused", "[models]") {
  sparsetune::models::XgbClassifier c(3);
  c.fit({{0.0}, {1.0}, {2.0}, {0.1}, {1.1}, {2.1}}, {0, 1, 2, 0, 1, 2});
  CHECK_NOTHROW(sparsetune::models::XgbClassifier::load(c.save(), 3, 1, "three"));
  CHECK_THROWS_WITH(sparsetune::models::XgbClassifier::load(c.save(), 4, 1, "four.json"),
                    Catch::Contains("four.json") && Catch::Contains("4 expected"));
}
