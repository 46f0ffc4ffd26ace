// tune --op sptv on a GPU: the emitted kernels verified against the fp64 SpTV reference on every
// mode, and Alg. 1's pipeline run from pinned host memory for several stream counts, verified.
#include "search/sptv_tune.hpp"

#include <catch2/catch.hpp>
#include <filesystem>

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
      o.launch = {{"/proc/self/exe", runtime::kWorkerSubcommand}};
      const auto r = search::tune_sptv(o);
      INFO(name << " mode " << mode << ": " << r.report["gpu"].dump(2));
      REQUIRE(r.report["measured"] == true);
      CHECK(r.report["gpu"]["verified"] == true);
      const auto& p = r.report["gpu"]["pipeline"];
      REQUIRE(p.contains("measured"));
      for (const auto& m : p["measured"]) CHECK(m.value("verified", false));
      CHECK(p["best_measured_streams"].get<int>() >= 1);
    }
  }
}
