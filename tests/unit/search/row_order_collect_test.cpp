// row-orders collect where nothing can be timed (its worker cannot start): matrices already in
// the CSV are skipped (a finished run resumes to nothing), and the first matrix left to time ends
// the run with NoGpu, its CSV as it was.
#include <catch2/catch.hpp>

#include "graph/spmm_graph.hpp"
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

TEST_CASE("the kernel the orders are timed under, and its grid", "[search][row-order]") {
  search::RowOrderTimingOptions o;
  const auto threads = [](const graph::Graph& g) {
    for (const auto& op : g.ops)
      if (op.op == "SET_RESOURCES") return op.params.at("threads").get<int>();
    return -1;
  };
  const auto cap = [](const graph::Graph& g) {
    for (const auto& op : g.ops)
      if (op.op == "SET_RESOURCES") return op.params.value("max_blocks", 1 << 20);
    return -1;
  };
  // The default: the search's warp-per-row seed as it is, row-major, no cap.
  const auto lanes = search::row_order_kernel(o, 128, 132);
  CHECK(lanes.name == "warp-row-lanes");
  CHECK(threads(lanes) == 128);
  CHECK(cap(lanes) == 1 << 20);
  CHECK(search::row_order_layout(o) == "row");
  // N_w = 32, one wave of 2 CTAs a multiprocessor over 132 of them.
  o.warps = 32;
  o.ctas_per_sm = 2;
  const auto wide = search::row_order_kernel(o, 128, 132);
  CHECK(threads(wide) == 1024);
  CHECK(cap(wide) == 264);
  CHECK(graph::with_row_order(wide, 4).ops[0].params["warps"] == 32);
  // Alg. 1 as written: column-major, 32 warps, 2 CTAs a multiprocessor shared by the 16 column
  // tiles of n = 128 (tn = 8); the grid stays uncapped where the device is unknown.
  search::RowOrderTimingOptions s;
  s.kernel = "stationary";
  CHECK(search::row_order_layout(s) == "col");
  const auto st = search::row_order_kernel(s, 128, 132);
  CHECK(st.name == "output-stationary");
  CHECK(threads(st) == 1024);
  CHECK(cap(st) == 16);
  CHECK(cap(search::row_order_kernel(s, 128, 0)) == 1 << 20);
  CHECK(cap(search::row_order_kernel(s, 4000, 132)) == 1);  // never below one CTA
  s.kernel = "tiles";
  CHECK_THROWS_WITH(search::row_order_kernel(s, 32, 132), Catch::Contains("--kernel"));
  CHECK_THROWS_WITH(search::check_row_order_options(s), Catch::Contains("--kernel"));
}
