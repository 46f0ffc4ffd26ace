// row-orders collect where nothing can be timed (its worker cannot start): matrices already in
// the CSV are skipped (a finished run resumes to nothing), and the first matrix left to time ends
// the run with NoGpu, its CSV as it was.
#include <catch2/catch.hpp>

#include "io/file_bytes.hpp"
#include "models/row_order_model.hpp"
#include "search/row_order_timings.hpp"
#include "test_support.hpp"

using namespace sparsetune;

TEST_CASE("row-orders collect resumes past the matrices in its CSV", "[search][row-order]") {
  testing::TempDir t("sparsetune-ro-collect");
  const std::string shared = std::string(SPARSETUNE_SHARED_DIR) + "/matrices/";
  const auto list = t.file("m.list");
  io::write_file_atomic(list, shared + "cora.mtx.gz\n" + shared + "494_bus.mtx.gz\n");
  models::RowOrderRecord r;
  r.rows = r.cols = 1;
  r.nnz = 1;
  r.n = 32;
  r.features.assign(models::row_order_feature_names().size(), 0.0);
  r.time_us.assign(11, 1.0);
  r.order_ms.assign(11, 0.0);
  std::vector<models::RowOrderRecord> done;
  for (const char* name : {"cora", "494_bus"}) {
    r.matrix = name;
    done.push_back(r);
  }
  const auto csv = t.file("t.csv");
  const auto text = models::row_order_csv(done);
  io::write_file_atomic(csv, text);
  search::RowOrderTimingOptions o;
  o.launch.argv = {t.file("no-worker")};  // no worker starts, GPU or not: the run cannot time
  int seen = 0;
  const auto res = search::collect_row_orders(list, csv, t.file("gen"), o,
                                              [&](const search::RowOrderOutcome&) { ++seen; });
  CHECK(res.items.empty());
  CHECK(seen == 0);
  CHECK(res.records == 2);
  CHECK(res.failed == 0);

  done.pop_back();  // 494_bus left to time
  io::write_file_atomic(csv, models::row_order_csv(done));
  CHECK_THROWS_AS(search::collect_row_orders(list, csv, t.file("gen"), o), search::NoGpu);
  CHECK(io::read_file(csv) == models::row_order_csv(done));  // untouched
}
