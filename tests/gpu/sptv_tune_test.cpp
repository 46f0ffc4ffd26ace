// tune --op sptv on a GPU: the emitted kernels verified against the fp64 SpTV reference on every
// mode, and Alg. 1's pipeline run from pinned host memory for several stream counts, verified;
// Slice-GCN's labels timed slice by slice in every format.
#include "search/sptv_tune.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>

#include "gen/random_tensor.hpp"
#include "io/tensor_file.hpp"
#include "search/slice_timings.hpp"
#include "test_support.hpp"

using namespace sparsetune;

TEST_CASE("tune --op sptv verifies every mode on the GPU and runs the pipeline", "[gpu]") {
  for (const char* name : {"T2_d_LMOP", "aminoacid", "KG_JF17K_3"}) {
    for (int mode = 0; mode < 3; ++mode) {
      testing::TempDir t("sparsetune-gpu-sptv");
      search::SptvTuneOptions o;
      o.tensor = testing::shared_dir().string() + "/tensors/" + name + ".tns.gz";
      o.mode = mode;
      o.out_dir = (t.path / "out").string();
      o.budget_s = 10;
      o.dtype = mode == 1 ? "f32" : "f64";
      o.rank_transfers = mode == 2;  // designs ranked by Alg. 1's pipeline from host memory
      o.launch = {{"/proc/self/exe", runtime::kWorkerSubcommand}};
      const auto r = search::tune_sptv(o);
      INFO(name << " mode " << mode << ": " << r.report["gpu"].dump(2));
      REQUIRE(r.report["measured"] == true);
      CHECK(r.report["gpu"]["verified"] == true);
      // The predicted design (--budget 0's answer) measured first, then the others while the
      // budget lasts.
      const auto& search = r.report["selection"]["search"];
      REQUIRE(search.size() >= 1);
      CHECK(search[0]["design"] == r.report["selection"]["predicted"]["design"]);
      CHECK(search[0]["predicted"] == true);
      CHECK(search[0].contains("time_ms"));
      CHECK(r.report["gpu"]["ranked_by"] == (mode == 2 ? "transfers" : "device"));
      // Ranked by the kernels, COO in column-sorted thread blocks is measured (and verified) too.
      bool sorted_coo = false;
      for (const auto& row : search)
        if (row["design"] == "all COO, column-sorted blocks")
          sorted_coo = row.contains("time_ms") ||
                       row.value("note", "").find("budget spent") != std::string::npos;
      CHECK(sorted_coo == (mode != 2));
      // The emitted design is the best of those measured, by the ranking's time.
      const char* key = mode == 2 ? "pipeline_ms" : "time_ms";
      double best = 1e300;
      for (const auto& row : search) {
        if (mode == 2 && row.contains("time_ms")) CHECK(row.contains("pipeline_ms"));
        if (row.contains(key)) best = std::min(best, row[key].get<double>());
      }
      if (mode == 2)
        CHECK(r.report["gpu"]["pipeline"]["best_measured_ms"].get<double>() == best);
      else  // the search's run of the design kept is the one reported
        CHECK(r.report["gpu"]["time_ms"]["median"].get<double>() == best);
      const auto& p = r.report["gpu"]["pipeline"];
      REQUIRE(p.contains("measured"));
      std::set<int> cuts;
      double fastest = 1e300;
      for (const auto& m : p["measured"]) {
        CHECK(m.value("verified", false));
        cuts.insert(m["batches"].get<int>());
        fastest = std::min(fastest, m["time_ms"].get<double>());
      }
      // Alg. 1's 16 batches per format and one batch per format, the fastest of all kept; the
      // model is judged against the best of Alg. 1's cut.
      CHECK(cuts == std::set<int>{1, 16});
      CHECK(p["best_measured_ms"].get<double>() == fastest);
      CHECK(p["alg1_best_ms"].get<double>() >= fastest);
      CHECK(p.contains("y_back"));  // batch by batch, or at the end when formats interleave
      CHECK(p["best_measured_streams"].get<int>() >= 1);
    }
  }
}

TEST_CASE("slice-gcn collect times every sampled slice in every slice format", "[gpu]") {
  search::SliceTimingOptions o;
  o.tensor = testing::shared_dir().string() + "/tensors/aminoacid.tns.gz";
  o.label = "aminoacid";
  o.max_slices = 6;
  o.runs = 5;
  o.target_rows = 16384;
  o.max_copies = 256;
  // Small designs: the six slices are timed over several batches.
  o.design_entries = 1 << 14;
  o.launch = {{"/proc/self/exe", runtime::kWorkerSubcommand}};
  for (int mode = 0; mode < 3; ++mode) {
    o.mode = mode;
    const auto r = search::time_slices(o);
    INFO("mode " << mode << ": " << r.notes.dump());
    std::map<std::int64_t, std::set<int>> formats;
    for (const auto& x : r.records) {
      CHECK(x.tensor == "aminoacid");
      CHECK(x.mode == mode);
      CHECK(x.time_us > 0);
      formats[x.slice].insert(x.format);
    }
    CHECK(formats.size() >= 1);
    CHECK(formats.size() <= 6);
    // CSR, COO, ELL and HYB for every slice; Dense where its block is small enough.
    for (const auto& [slice, f] : formats) CHECK(f.size() >= 4);
  }
}

TEST_CASE("ranked by transfers, the pipeline sends 24-bit column words", "[gpu]") {
  // Mode 1 of 70,000 indices: 17-bit columns, 32-bit words split to 16 + 8 bits. Skewed slices.
  testing::TempDir t("sparsetune-gpu-sptv-split");
  gen::RandomTensorParams p;
  p.dims = {24, 70000, 40};
  p.nnz = 60000;
  p.skew = 1.1;
  const auto path = (t.path / "wide.tns").string();
  io::write_tensor(path, gen::random_tensor(p, 5));
  search::SptvTuneOptions o;
  o.tensor = path;
  o.mode = 1;
  o.out_dir = (t.path / "out").string();
  o.budget_s = 5;
  o.dtype = "f32";
  o.rank_transfers = true;
  o.slice_format = "COO";
  o.launch = {{"/proc/self/exe", runtime::kWorkerSubcommand}};
  const auto r = search::tune_sptv(o);
  INFO(r.report["gpu"].dump(2));
  REQUIRE(r.report["measured"] == true);
  CHECK(r.report["gpu"]["verified"] == true);
  // All COO stores a value (4 bytes) and a 24-bit word (3) an entry, plus a 16-bit row per 4.
  const auto bytes = r.report["format_bytes"].get<double>();
  CHECK(bytes < 8.0 * 60000);  // 8.5 with 32-bit words
  // Every cut of the pipeline is optimized as the design is: about the same bytes, not 9 an entry.
  const auto& measured = r.report["gpu"]["pipeline"]["measured"];
  REQUIRE(measured.size() >= 2);
  for (const auto& m : measured) {
    CHECK(m.value("verified", false));
    CHECK(m["format_bytes"].get<double>() < 8.0 * 60000);
  }
}
