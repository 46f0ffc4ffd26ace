// tune --op sptv without a GPU: predict the slice formats, emit, check on the CPU, compile.
#include "search/sptv_tune.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/reference.hpp"
#include "core/sptv_matrix.hpp"
#include "graph/format.hpp"
#include "graph/interpreter.hpp"
#include "graph/sptv_graph.hpp"
#include "io/safetensors.hpp"
#include "io/tns.hpp"
#include "models/slice_gcn.hpp"
#include "test_support.hpp"

using namespace sparsetune;
namespace fs = std::filesystem;

namespace {

const std::string kTensor = std::string(SPARSETUNE_TEST_DATA_DIR) + "/order3.tns";

search::SptvTuneOptions options(const testing::TempDir& t, const std::string& tensor, int mode) {
  search::SptvTuneOptions o;
  o.tensor = tensor;
  o.mode = mode;
  o.out_dir = (t.path / "out").string();
  o.use_gpu = false;
  return o;
}

}  // namespace

TEST_CASE("tune --op sptv --budget 0 predicts, emits and compiles every mode", "[search][sptv]") {
  const auto x = io::read_tns(kTensor);
  for (int mode = 0; mode < 3; ++mode) {
    INFO("mode " << mode);
    testing::TempDir t("sparsetune-sptv-tune");
    const auto r = search::tune_sptv(options(t, kTensor, mode));
    for (const char* f :
         {"format.safetensors", "kernel.cu", "kernel.h", "graph.json", "report.json"})
      CHECK(fs::file_size(t.path / "out" / f) > 0);
    std::ifstream in(t.path / "out" / "report.json");
    const auto j = nlohmann::json::parse(in);
    CHECK(j["op"] == "sptv");
    CHECK(j["mode"] == mode);
    CHECK(j["measured"] == false);
    // The structural rule unless a trained model ships for sm_90.
    const auto predictor = j["selection"]["predictor"].get<std::string>();
    CHECK((predictor.find("structural rule") == 0 || predictor.find("slice-gcn") == 0));
    // The design emitted is the predicted one, the candidate of the fewest bytes an entry (every
    // slice of this small tensor sampled: the whole designs' bytes).
    const auto& cand = j["selection"]["predicted"]["candidates"];
    REQUIRE(cand.size() >= 4);
    double least = 1e300;
    for (const auto& c : cand) least = std::min(least, c["bytes_per_entry"].get<double>());
    for (const auto& c : cand)
      if (c["picked"] == true) {
        CHECK(c["design"] == j["selection"]["predicted"]["design"]);
        CHECK(c["bytes_per_entry"].get<double>() == least);
      }
    CHECK(j["format_bytes"].get<double>() / static_cast<double>(x.nnz()) == Approx(least));
    CHECK(j["cpu_check"]["error"].get<double>() <= j["cpu_check"]["tolerance"].get<double>());
    CHECK(j["compile"]["arch"] == "sm_90");
    // The binary read back computes Y = X ×_mode v as the fp64 reference does.
    const auto f = graph::read_format((t.path / "out" / "format.safetensors").string());
    CHECK(f.op == "sptv");
    CHECK(f.sptv.mode == mode);
    std::vector<double> v(x.dims[mode]);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = 1.0 + static_cast<double>(i);
    CHECK(f.sptv.y_order == sptv_output_order(x.order(), mode, f.sptv.slice_mode));
    CHECK(relative_l2_error(graph::interpret(f, v),
                            sptv_reference_in_view_order(x, mode, f.sptv.slice_mode, v).val) <
          1e-12);
  }
}

TEST_CASE("tune --op sptv uses a Slice-GCN model when given one", "[search][sptv]") {
  testing::TempDir t("sparsetune-sptv-tune");
  models::GcnShape s;
  s.conv = 4;
  s.hidden = 4;
  models::GcnModelInfo info;
  info.labels = "synthetic";
  info.date = "2026-01-01";
  models::SliceGcn(s, 1).save(t.file("gcn.safetensors"), info);
  auto o = options(t, kTensor, 2);
  o.model = t.file("gcn.safetensors");
  o.sparsity_threshold = 1.01;  // every slice goes to stage 2
  o.dtype = "f32";
  const auto r = search::tune_sptv(o);
  CHECK(r.report["selection"]["predictor"].get<std::string>().find("slice-gcn") == 0);
  for (const auto& sl : r.report["slices"]) CHECK(sl["by"] == "slice-gcn");
}

TEST_CASE("tune --op sptv falls back to the rule from a stale shipped model, and says why",
          "[search][sptv]") {
  testing::TempDir t("sparsetune-sptv-tune");
  const auto dir = t.path / "configs" / "models" / "sm_90";
  fs::create_directories(dir);
  models::GcnShape s;
  s.conv = 4;
  s.hidden = 4;
  models::SliceGcn(s, 1).save((dir / "slice_gcn.safetensors").string(), {});
  auto f = io::read_safetensors((dir / "slice_gcn.safetensors").string());
  f.metadata["format_version"] = "1";
  io::write_safetensors((dir / "slice_gcn.safetensors").string(), f);
  const char* before = std::getenv("SPARSETUNE_CONFIG_DIR");
  const std::string keep = before ? before : "";
  setenv("SPARSETUNE_CONFIG_DIR", (t.path / "configs").c_str(), 1);
  auto o = options(t, kTensor, 2);
  const auto r = search::tune_sptv(o);
  if (keep.empty())
    unsetenv("SPARSETUNE_CONFIG_DIR");
  else
    setenv("SPARSETUNE_CONFIG_DIR", keep.c_str(), 1);
  const auto predictor = r.report["selection"]["predictor"].get<std::string>();
  CHECK(predictor.find("structural rule: the shipped Slice-GCN is stale") == 0);
  CHECK(predictor.find("format_version 1") != std::string::npos);
  // The same file named by --model is refused.
  auto named = options(t, kTensor, 2);
  named.model = (dir / "slice_gcn.safetensors").string();
  REQUIRE_THROWS_WITH(search::tune_sptv(named), Catch::Contains("format_version 1"));
}

TEST_CASE("tune --op sptv refuses bad input by name, writing nothing", "[search][sptv]") {
  testing::TempDir t("sparsetune-sptv-tune");
  REQUIRE_THROWS_WITH(search::tune_sptv(options(t, kTensor, 3)), Catch::Contains("--mode 3"));
  auto o = options(t, kTensor, 0);
  o.model = t.file("missing.safetensors");
  REQUIRE_THROWS_WITH(search::tune_sptv(o), Catch::Contains("missing.safetensors"));
  CHECK(!fs::exists(t.path / "out"));
}

TEST_CASE("tune --op sptv --batches cuts every slice format into parts", "[search][sptv]") {
  testing::TempDir t("sparsetune-sptv-tune");
  const std::string tensor = std::string(SPARSETUNE_TEST_DATA_DIR) + "/order3.tns";
  auto o = options(t, tensor, 1);
  o.batches = 3;
  const auto r = search::tune_sptv(o);
  const auto& div = r.report["graph"]["ops"][0];
  CHECK(div["op"] == "SLICE_DIV");
  CHECK(div["branches"].size() == 3);  // three non-empty slices, one format
  const auto x = io::read_tns(tensor);
  const auto f = graph::read_format((t.path / "out" / "format.safetensors").string());
  std::vector<double> v(x.dims[1], 1.5);
  CHECK(relative_l2_error(graph::interpret(f, v),
                          sptv_reference_in_view_order(x, 1, f.sptv.slice_mode, v).val) < 1e-12);
  o.batches = 0;
  REQUIRE_THROWS_WITH(search::tune_sptv(o), Catch::Contains("--batches"));
}

TEST_CASE("tune --op sptv --slice-format stores every slice in one format", "[search][sptv]") {
  const auto x = io::read_tns(kTensor);
  for (const char* name : {"CSR", "COO", "ELL", "HYB", "Dense"}) {
    INFO(name);
    testing::TempDir t("sparsetune-sptv-tune");
    auto o = options(t, kTensor, 2);
    o.slice_format = name;
    const auto r = search::tune_sptv(o);
    CHECK(r.report["selection"]["predictor"] == std::string("forced: --slice-format ") + name);
    for (const auto& sl : r.report["slices"]) {
      CHECK(sl["format"] == name);
      CHECK(sl["by"] == "forced");
    }
    const auto f = graph::read_format((t.path / "out" / "format.safetensors").string());
    const int want = static_cast<int>(*graph::slice_format_from_name(name));
    for (auto code : f.sptv.slice_format) CHECK(code == want);
    std::vector<double> v(x.dims[2]);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.5 + static_cast<double>(i);
    CHECK(relative_l2_error(graph::interpret(f, v),
                            sptv_reference_in_view_order(x, 2, f.sptv.slice_mode, v).val) < 1e-12);
  }
  testing::TempDir t("sparsetune-sptv-tune");
  {
    // 20,000 fibers of one entry along a mode of 10,000: Dense would store 2e8 values.
    std::ofstream out(t.file("sparse.tns"));
    for (int e = 0; e < 20000; ++e)
      out << 1 + e % 3 << ' ' << 1 + e << ' ' << 1 + (e * 7919) % 10000 << " 1.5\n";
  }
  auto d = options(t, t.file("sparse.tns"), 2);
  d.slice_format = "Dense";
  REQUIRE_THROWS_WITH(search::tune_sptv(d),
                      Catch::Contains("Dense would store") && Catch::Contains("sparse.tns"));
  auto o = options(t, kTensor, 2);
  o.slice_format = "BSR";
  REQUIRE_THROWS_WITH(search::tune_sptv(o),
                      Catch::Contains("--slice-format") && Catch::Contains("BSR"));
  CHECK(!fs::exists(t.path / "out"));
}
