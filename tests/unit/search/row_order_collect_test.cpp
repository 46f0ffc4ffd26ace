// `collect --op spmm --row-orders` into the tuning database and `train --model row-order` out of
// it, on the CPU: the orders' times come from a stand-in whose best order is a function of a
// feature; the database round trip must give the model `row-orders train` gives the same records.
#include "search/row_order_collect.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <functional>

#include "core/fingerprint.hpp"
#include "core/row_orders.hpp"
#include "models/predictors.hpp"
#include "models/row_order_rows.hpp"
#include "test_support.hpp"

using namespace sparsetune;

namespace {

std::vector<models::RowOrderRecord> fake_orders(const Csr64& a, const std::string& label,
                                                const search::RowOrderTimingOptions& o) {
  const auto nf = models::row_order_feature_names().size();
  const auto no = row_orders::all_orders().size();
  std::vector<models::RowOrderRecord> out;
  const auto i = static_cast<int>(a.rows);
  for (auto n : o.n) {
    models::RowOrderRecord r;
    r.matrix = label;
    r.rows = a.rows;
    r.cols = a.cols;
    r.nnz = a.nnz();
    r.n = n;
    r.features.assign(nf, 0.0);
    for (std::size_t k = 0; k < nf; ++k) r.features[k] = std::fmod(0.37 * i * (k + 1), 7.0);
    r.features[3] = i % 3;
    const int best = i % 3 == 0 ? 0 : i % 3 == 1 ? 4 : 7;
    for (std::size_t k = 0; k < no; ++k)
      r.time_us.push_back(static_cast<int>(k) == best ? 10.0 : 10.0 * (1.3 + 0.01 * k));
    r.time_us[9] = -1;  // one order that failed
    r.order_ms.assign(no, 0.25 * n);
    r.cusparse_us = 12.5;
    out.push_back(r);
  }
  return out;
}

// A second round of the same matrices into its own database (as a second GPU or a later round
// writes it): the stand-in's times four times over, then `edit` applied to each record.
search::RowOrderCollectOptions second_round(search::RowOrderCollectOptions o, std::string db,
                                            std::function<void(models::RowOrderRecord&)> edit) {
  o.db_path = std::move(db);
  o.time_one = [edit](const Csr64& a, const std::string& label,
                      const search::RowOrderTimingOptions& t) {
    auto r = fake_orders(a, label, t);
    for (auto& x : r) {
      for (auto& us : x.time_us)
        if (us > 0) us *= 4;
      x.cusparse_us *= 4;
      edit(x);
    }
    return r;
  };
  return o;
}

}  // namespace

TEST_CASE("collect --row-orders records each order's time per N and trains the row-order model",
          "[search][collect][row-order]") {
  testing::TempDir dir("sparsetune-row-order-collect");
  {
    std::ofstream list(dir.file("corpus.list"));
    for (int nx = 4; nx < 28; ++nx) list << "gen stencil2d nx=" << nx << " seed=1\n";
  }
  const auto items = search::read_collect_list(dir.file("corpus.list"));
  search::RowOrderCollectOptions o;
  o.db_path = dir.file("tuning.db");
  std::vector<models::RowOrderRecord> direct;  // what the stand-in returned
  int calls = 0;
  o.time_one = [&](const Csr64& a, const std::string& label,
                   const search::RowOrderTimingOptions& t) {
    ++calls;
    auto r = fake_orders(a, label, t);
    direct.insert(direct.end(), r.begin(), r.end());
    return r;
  };
  const auto s = search::collect_row_orders_db(items, o);
  CHECK(s.done == 24);
  CHECK(calls == 24);
  {
    db::TuningDb db(o.db_path);
    // Eleven orders and cuSPARSE, at N = 32 and 128.
    CHECK(db.measurements().size() == 24 * 2 * 12);
    CHECK(db.runs().size() == 48);
  }
  SECTION("a second collect skips what is measured; a new N is measured alone") {
    CHECK(search::collect_row_orders_db(items, o).skipped == 24);
    o.timing.n = {32, 64};
    int asked = 0;
    o.time_one = [&](const Csr64& a, const std::string& label,
                     const search::RowOrderTimingOptions& t) {
      asked += static_cast<int>(t.n.size());
      CHECK(t.n == std::vector<std::int64_t>{64});
      return fake_orders(a, label, t);
    };
    CHECK(search::collect_row_orders_db(items, o).done == 24);
    CHECK(asked == 24);
  }
  SECTION("a database timed under one candidate rule is timed again under the other") {
    // The first collect timed shared lines (the default); the matrix rule is a round of its own,
    // every N again, and then done under either rule.
    auto m = o;
    m.timing.candidates = row_orders::Candidates::matrix;
    int asked = 0;
    m.time_one = [&](const Csr64& a, const std::string& label,
                     const search::RowOrderTimingOptions& t) {
      asked += static_cast<int>(t.n.size());
      CHECK(t.candidates == row_orders::Candidates::matrix);
      auto r = fake_orders(a, label, t);
      for (auto& x : r) x.candidates = t.candidates;
      return r;
    };
    CHECK(search::collect_row_orders_db(items, m).done == 24);
    CHECK(asked == 48);
    CHECK(search::collect_row_orders_db(items, m).skipped == 24);
    CHECK(search::collect_row_orders_db(items, o).skipped == 24);
    db::TuningDb db(o.db_path);
    const auto rows = models::read_row_order_rows(db, "", "both", row_orders::Candidates::matrix);
    CHECK(rows.records.size() == direct.size());
  }
  SECTION("train --model row-order gives what row-orders train gives the same records") {
    db::TuningDb db(o.db_path);
    models::TrainOptions opt;
    opt.out_dir = dir.file("models");
    const auto r = models::find_predictor("row-order").train(db, opt);
    nlohmann::json rep;
    models::RowOrderTrainOptions t;
    models::RowOrderModel::train(direct, t, &rep);
    // The same split and the same figures (the records come back in another order, so sums
    // may differ in the last bits).
    CHECK(r.report["split"]["test"] == rep["split"]["test"]);
    for (const char* side : {"train", "test"})
      for (const auto& [key, value] : rep[side].items())
        if (value.is_number()) {
          INFO(side << "." << key);
          CHECK(r.report[side][key].get<double>() == Approx(value.get<double>()));
        }
    CHECK(r.report["model"] == "row-order");
    CHECK(r.report["training_set"]["class_weights"] == true);
    // --no-class-weights trains what row-orders train --no-class-weights trains.
    models::TrainOptions plain = opt;
    plain.out_dir.clear();
    plain.no_class_weights = true;
    const auto u = models::find_predictor("row-order").train(db, plain);
    CHECK(u.report["training_set"]["class_weights"] == false);
    nlohmann::json urep;
    t.class_weights = false;
    models::RowOrderModel::train(direct, t, &urep);
    CHECK(u.report["test"]["predicted_speedup"].get<double>() ==
          Approx(urep["test"]["predicted_speedup"].get<double>()));
    CHECK(u.report["train"]["predicted_share_of_oracle"].get<double>() ==
          Approx(urep["train"]["predicted_share_of_oracle"].get<double>()));
    REQUIRE(r.files.size() == 3);
    const auto back = models::RowOrderModel::read(r.files[0]);
    CHECK(back.file().arch == "sm_90");
    // The rule its Hamming orders were timed under, which tune then builds its pick with.
    CHECK(back.candidates() == row_orders::Candidates::shared_lines);
  }
  SECTION("a time collected twice reads back as the geometric mean of the two") {
    // A second collection, one order failing there only.
    const auto again = second_round(o, dir.file("round-b.db"),
                                    [](models::RowOrderRecord& x) { x.time_us[2] = -1; });
    CHECK(search::collect_row_orders_db(items, again).done == 24);
    db::TuningDb db(o.db_path);
    db.merge(again.db_path);
    const auto rows = models::read_row_order_rows(db, "", "merged");
    REQUIRE(rows.records.size() == direct.size());
    for (const auto& r : rows.records) {
      const auto d = std::find_if(direct.begin(), direct.end(), [&](const auto& x) {
        return x.matrix == r.matrix && x.n == r.n;
      });
      REQUIRE(d != direct.end());
      INFO(r.matrix << " N = " << r.n);
      CHECK(r.time_us[0] == Approx(2 * d->time_us[0]));  // sqrt(t * 4t)
      CHECK(r.time_us[2] == Approx(d->time_us[2]));      // measured once: as measured
      CHECK(r.time_us[9] < 0);                           // failed in both: unmeasured
      CHECK(r.cusparse_us == Approx(25.0));
    }
    // Each collection's times apart, in the order they were merged: the same best order in
    // both, so one collection's best keeps the other's whole gain.
    REQUIRE(rows.collections.size() == rows.records.size());
    CHECK(rows.collections[0].size() == 2);
    CHECK(rows.collections[0][1][0] == Approx(4 * rows.collections[0][0][0]));
    CHECK(rows.collections[0][1][2] < 0);
    const auto rep = models::label_repeatability(rows.collections);
    CHECK(rep["records"] == 48);
    CHECK(rep["same_best"].get<double>() == 1.0);
    CHECK(rep["share_of_oracle_gain"].get<double>() == Approx(1.0));
  }
  SECTION("the Hamming orders are read from their own rule's rows, the others from all") {
    // A second round with the matrix's order as candidates.
    const auto again = second_round(o, dir.file("round-matrix.db"), [](models::RowOrderRecord& x) {
      x.candidates = row_orders::Candidates::matrix;
    });
    CHECK(search::collect_row_orders_db(items, again).done == 24);
    {
      // That round alone holds no shared-lines times: said, with the database's name.
      db::TuningDb only(again.db_path);
      CHECK_THROWS_WITH(models::read_row_order_rows(only, "", "round-matrix.db"),
                        Catch::Contains("round-matrix.db") && Catch::Contains("matrix") &&
                            Catch::Contains("--candidates shared-lines"));
    }
    db::TuningDb db(o.db_path);
    db.merge(again.db_path);
    const int lpt = 4, cta = 6;  // LPT ignores the rule; CTA-aware is a Hamming search
    REQUIRE_FALSE(row_orders::uses_candidates(row_orders::all_orders()[lpt]));
    REQUIRE(row_orders::uses_candidates(row_orders::all_orders()[cta]));
    for (auto rule : {row_orders::Candidates::shared_lines, row_orders::Candidates::matrix}) {
      const auto rows = models::read_row_order_rows(db, "", "merged", rule);
      REQUIRE(rows.records.size() == direct.size());
      const double hamming = rule == row_orders::Candidates::matrix ? 4 : 1;
      for (const auto& r : rows.records) {
        const auto d = std::find_if(direct.begin(), direct.end(), [&](const auto& x) {
          return x.matrix == r.matrix && x.n == r.n;
        });
        REQUIRE(d != direct.end());
        INFO(r.matrix << " N = " << r.n << ", " << row_orders::name(rule));
        CHECK(r.candidates == rule);
        CHECK(r.time_us[0] == Approx(2 * d->time_us[0]));  // both rounds: sqrt(t * 4t)
        CHECK(r.time_us[lpt] == Approx(2 * d->time_us[lpt]));
        CHECK(r.time_us[cta] == Approx(hamming * d->time_us[cta]));  // its rule's round only
      }
    }
  }
  SECTION("a database without row-order times has nothing for row-order") {
    db::TuningDb empty(dir.file("empty.db"));
    REQUIRE_THROWS_AS(models::find_predictor("row-order").train(empty, {}), models::NothingToLearn);
  }
}

TEST_CASE("a row-order time with params of the wrong shape names the field",
          "[models][row-order]") {
  const auto bad = [&](const std::string& params) {
    db::TuningDb one(":memory:");
    one.put_matrix({"fp1", "m1", 10, 10, 30, "{}"});
    db::Measurement m;
    m.fingerprint = "fp1";
    m.op = models::kRowOrderOp;
    m.dtype = "f32";
    m.n = 32;
    m.arch = "sm_90";
    m.candidate = "row-order/original";
    m.params = params;
    m.time_us = 5;
    one.add(m);
    return models::read_row_order_rows(one, "", "x.json");
  };
  const auto where = Catch::Contains("x.json: the row-order time of m1 at N = 32");
  CHECK_THROWS_WITH(bad("{"), where && Catch::Contains("malformed params"));
  CHECK_THROWS_WITH(bad("[1, 2]"), where && Catch::Contains("params must be a JSON object"));
  CHECK_THROWS_WITH(bad(R"({"order": 0})"), where && Catch::Contains("field 'order'"));
  CHECK_THROWS_WITH(bad(R"({"order": "original", "features": [1, "x"]})"),
                    where && Catch::Contains("field 'features' must be a list of numbers"));
  CHECK_THROWS_WITH(bad(R"({"order": "original", "order_ms": "fast"})"),
                    Catch::Contains("field 'order_ms' must be a number"));
  CHECK_THROWS_WITH(bad(R"({"order": "cta-aware", "candidates": 1})"),
                    Catch::Contains("field 'candidates' must be a name"));
  CHECK(bad(R"({"order": "original", "order_ms": 0.5})").records.empty());  // no features: unused

  // The rule of a row read without vetting it (collect's resume check): anything else is no rule.
  using nlohmann::json;
  CHECK(models::hamming_rule(json{{"order", "cta-aware"}}) == "matrix");
  CHECK(models::hamming_rule(json{{"order", "cta-aware"}, {"candidates", "shared-lines"}}) ==
        "shared-lines");
  CHECK(models::hamming_rule(json{{"order", "lpt"}, {"candidates", "shared-lines"}}).empty());
  CHECK(models::hamming_rule(json{{"order", 6}}).empty());
  CHECK(models::hamming_rule(json{{"order", "cta-aware"}, {"candidates", 1}}).empty());
  CHECK(models::hamming_rule(json::array({1, 2})).empty());

  // Times of two architectures and none asked: both named, not the first one met taken.
  db::TuningDb two(":memory:");
  two.put_matrix({"fp1", "m1", 10, 10, 30, "{}"});
  for (const char* arch : {"sm_80", "sm_90", "sm_90"}) {
    db::Measurement m;
    m.fingerprint = "fp1";
    m.op = models::kRowOrderOp;
    m.dtype = "f32";
    m.n = arch[3] == '8' ? 32 : 128;
    m.arch = arch;
    m.candidate = std::string("row-order/") + (m.n == 32 ? "original" : "plain");
    m.params = R"({"order": ")" + m.candidate.substr(10) + R"("})";
    m.time_us = 5;
    two.add(m);
  }
  CHECK_THROWS_WITH(
      models::read_row_order_rows(two, "", "two.db"),
      Catch::Contains("two.db") && Catch::Contains("sm_80 (1 rows)") && Catch::Contains("--arch"));
  CHECK(models::read_row_order_rows(two, "sm_90", "two.db").arch == "sm_90");
}
