// `collect` on the CPU: the list's syntax, resuming (a matrix with a completed search is skipped),
// and a failing matrix recorded with its reason without stopping the run. A test hook stands in
// for the child `tune` and records the run tune would record.
#include "search/collect.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <set>

#include "core/error.hpp"
#include "core/fingerprint.hpp"
#include "db/tuning_db.hpp"
#include "io/matrix_file.hpp"
#include "test_support.hpp"

using namespace sparsetune;

namespace {

std::string data(const std::string& name) {
  return std::string(SPARSETUNE_TEST_DATA_DIR) + "/" + name;
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST_CASE("collect: list lines, generated matrices and their provenance", "[search]") {
  testing::TempDir t("sparsetune-collect-test");
  write(t.file("a.list"), "# a corpus\n" + data("general_real.mtx") + "  HB\n\n" +
                              "gen stencil2d nx=12 points=9 seed=3\n"
                              "gen kron scale=6 family=graphs   # comment\n");
  const auto items = search::read_collect_list(t.file("a.list"));
  REQUIRE(items.size() == 3);
  CHECK(items[0].name == "general_real");
  CHECK(items[0].family == "HB");
  CHECK(items[1].name == "stencil2d_nx=12_points=9_seed=3");
  CHECK(items[1].family == "gen:stencil2d");
  REQUIRE(items[1].gen);
  CHECK(items[1].gen->seed == 3);
  CHECK(items[2].family == "graphs");

  write(t.file("b.list"), "gen nosuchkind\n");
  CHECK_THROWS_WITH(search::read_collect_list(t.file("b.list")),
                    Catch::Contains("b.list:1") && Catch::Contains("nosuchkind"));
  write(t.file("c.list"), data("general_real.mtx") + "\n" + data("general_real.mtx") + "\n");
  CHECK_THROWS_WITH(search::read_collect_list(t.file("c.list")), Catch::Contains("c.list:2"));
  write(t.file("d.list"), "missing.mtx\n");
  CHECK_THROWS_WITH(search::read_collect_list(t.file("d.list")), Catch::Contains("d.list:1"));
  write(t.file("e.list"), "gen kron scale\n");
  CHECK_THROWS_WITH(search::read_collect_list(t.file("e.list")),
                    Catch::Contains("e.list:1") && Catch::Contains("name=value"));
}

TEST_CASE("collect --shard: N shards cover the list once, each every N-th item", "[search]") {
  const auto name = [](int k) {
    std::string n = "m";
    n += std::to_string(k);
    return n;
  };
  std::vector<search::CollectItem> items(7);
  for (int k = 0; k < 7; ++k) items[k].name = name(k);
  std::multiset<std::string> seen;
  for (int i = 0; i < 3; ++i) {
    const auto part = search::shard_of(items, std::to_string(i) + "/3");
    for (std::size_t k = 0; k < part.size(); ++k) {
      CHECK(part[k].name == name(i + 3 * static_cast<int>(k)));
      seen.insert(part[k].name);
    }
  }
  CHECK(seen.size() == 7);
  CHECK(std::set<std::string>(seen.begin(), seen.end()).size() == 7);
  CHECK(search::shard_of(items, "0/1").size() == 7);
  CHECK(search::shard_of(items, "6/8").size() == 1);  // the last item alone
  CHECK(search::shard_of(items, "7/8").empty());
  for (const std::string bad : {"3/3", "-1/3", "1/0", "1", "a/3", "1/3x", "/3", "1/"}) {
    std::string named = "--shard ";
    named += bad;
    CHECK_THROWS_WITH(search::shard_of(items, bad),
                      Catch::Contains(named) && Catch::Contains("I/N"));
  }
}

namespace {

// What a completed `tune --compile-only` records: the run of (matrix, op, value type, n) under
// the cost model's device key.
void record_search(const search::CollectItem& it, const search::CollectOptions& opt,
                   std::int64_t n) {
  db::TuningDb d(opt.db_path);
  db::Run r;
  r.fingerprint = fingerprint(io::read_matrix(it.path));
  r.op = opt.op;
  r.n = n;
  r.dtype = opt.dtype;
  r.device = "cost-model";
  r.family = it.family;
  d.add_run(r);
}

}  // namespace

TEST_CASE("collect: resumes, and a failing matrix neither stops the run nor counts as done",
          "[search]") {
  testing::TempDir t("sparsetune-collect-test");
  write(t.file("run.list"), data("general_real.mtx") + " HB\n" + data("symmetric_real.mtx") +
                                "\ngen stencil2d nx=10 seed=1\n" + data("skew_integer.mtx") + "\n");
  const auto items = search::read_collect_list(t.file("run.list"));
  std::vector<std::string> ran;
  bool fail_symmetric = true;
  search::CollectOptions o;
  o.db_path = t.file("tuning.db");
  o.compile_only = true;  // the cost-model key, as tune --compile-only records it
  o.budget_s = 1;
  std::vector<search::CollectProgress> seen;
  o.progress = [&](const search::CollectProgress& p) { seen.push_back(p); };
  o.run_one = [&](const search::CollectItem& it, const search::CollectOptions& opt, int) {
    ran.push_back(it.name);
    if (fail_symmetric && it.name == "symmetric_real") throw Error("the worker crashed");
    record_search(it, opt, 1);
  };

  const auto first = search::collect(items, o);
  CHECK(ran.size() == 4);
  CHECK(first.done == 3);
  CHECK(first.failed == 1);
  CHECK(first.skipped == 0);
  REQUIRE(first.items.size() == 4);
  CHECK(first.items[1].status == "failed");
  CHECK(first.items[1].reason == "the worker crashed");
  CHECK(seen.size() == 4);
  CHECK(seen.back().index == 3);
  CHECK(seen.back().eta_s >= 0);
  {
    // The failure is in the database with its reason; the generated matrix's family too.
    db::TuningDb d(o.db_path);
    int failures = 0;
    for (const auto& m : d.measurements())
      if (m.candidate == "collect/failed") {
        ++failures;
        CHECK(m.failure == "the worker crashed");
        CHECK_FALSE(m.ok);
      }
    CHECK(failures == 1);
    bool gen_family = false;
    for (const auto& r : d.runs()) gen_family = gen_family || r.family == "gen:stencil2d";
    CHECK(gen_family);
  }

  // Again: only the failed matrix runs; the others are skipped as done.
  ran.clear();
  fail_symmetric = false;
  const auto second = search::collect(items, o);
  CHECK(ran == std::vector<std::string>{"symmetric_real"});
  CHECK(second.skipped == 3);
  CHECK(second.done == 1);
  CHECK(second.failed == 0);

  ran.clear();
  const auto third = search::collect(items, o);
  CHECK(ran.empty());
  CHECK(third.skipped == 4);
}

TEST_CASE("collect: SpMM searches each n on its own and resumes per n", "[search]") {
  testing::TempDir t("sparsetune-collect-test");
  write(t.file("run.list"), data("general_real.mtx") + "\n" + data("symmetric_real.mtx") + "\n");
  const auto items = search::read_collect_list(t.file("run.list"));
  search::CollectOptions o;
  o.db_path = t.file("tuning.db");
  o.compile_only = true;
  o.budget_s = 1;
  o.op = "spmm";
  o.ns = {8, 64};
  std::vector<std::pair<std::string, int>> ran;
  bool fail_64 = true;
  o.run_one = [&](const search::CollectItem& it, const search::CollectOptions& opt, int n) {
    ran.emplace_back(it.name, n);
    if (fail_64 && n == 64 && it.name == "symmetric_real") throw Error("out of memory");
    record_search(it, opt, n);
  };
  const auto first = search::collect(items, o);
  CHECK(ran == std::vector<std::pair<std::string, int>>{{"general_real", 8},
                                                        {"general_real", 64},
                                                        {"symmetric_real", 8},
                                                        {"symmetric_real", 64}});
  CHECK(first.done == 3);
  CHECK(first.failed == 1);
  REQUIRE(first.items.size() == 4);
  CHECK(first.items[3].name == "symmetric_real n=64");
  {
    db::TuningDb d(o.db_path);
    int failures = 0;
    for (const auto& m : d.measurements())
      if (m.candidate == "collect/failed") {
        ++failures;
        CHECK(m.op == "spmm");
        CHECK(m.n == 64);
      }
    CHECK(failures == 1);
  }
  // Again: only the failed (matrix, n) runs; a new n is a search of its own.
  ran.clear();
  fail_64 = false;
  o.ns = {8, 64, 16};
  const auto second = search::collect(items, o);
  CHECK(ran == std::vector<std::pair<std::string, int>>{
                   {"general_real", 16}, {"symmetric_real", 64}, {"symmetric_real", 16}});
  CHECK(second.skipped == 3);
  CHECK(second.done == 3);
  // The SpMV key is another search: nothing of it is done yet.
  o.op = "spmv";
  ran.clear();
  CHECK(search::collect(items, o).done == 2);
  CHECK(ran ==
        std::vector<std::pair<std::string, int>>{{"general_real", 1}, {"symmetric_real", 1}});
  o.op = "sptv";
  CHECK_THROWS_WITH(search::collect(items, o), Catch::Contains("--op must be spmv or spmm"));
}

TEST_CASE("collect: without a GPU it refuses at once, naming the missing device", "[search]") {
  testing::TempDir t("sparsetune-collect-test");
  search::CollectOptions o;
  o.db_path = t.file("tuning.db");
  search::CollectItem it{"x", data("general_real.mtx"), "general_real", "", std::nullopt};
  // Without CUDA devices (as in CI) collect says so; on a GPU machine this case has nothing to
  // check.
  try {
    o.run_one = [](const search::CollectItem&, const search::CollectOptions&, int) {};
    search::collect({it}, o);
    SUCCEED("a GPU is present");
  } catch (const Error& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("collect measures on a GPU"));
  }
}

TEST_CASE("collect: a tune that searched nothing says why, from its report", "[search]") {
  testing::TempDir t("sparsetune-collect-test");
  write(t.file("starved.json"),
        R"({"search": {"note": "--budget 4 s leaves the search no time on this matrix"}})");
  CHECK(search::why_no_search(t.file("starved.json")) ==
        "--budget 4 s leaves the search no time on this matrix");
  write(t.file("plain.json"), R"({"search": {"candidates": 3}})");
  CHECK(search::why_no_search(t.file("plain.json")).empty());
  write(t.file("broken.json"), "{not json");
  CHECK(search::why_no_search(t.file("broken.json")).empty());
  CHECK(search::why_no_search(t.file("missing.json")).empty());
}

TEST_CASE("collect: the budget a starved tune asks for, from its report", "[search]") {
  testing::TempDir t("sparsetune-collect-test");
  write(t.file("starved.json"), R"({"search": {"note": "...", "budget_needed_s": 14}})");
  CHECK(search::budget_needed(t.file("starved.json")) == 14.0);
  write(t.file("plain.json"), R"({"search": {"candidates": 3}})");
  CHECK(search::budget_needed(t.file("plain.json")) == 0.0);
  write(t.file("odd.json"), R"({"search": {"budget_needed_s": "14"}})");
  CHECK(search::budget_needed(t.file("odd.json")) == 0.0);
  write(t.file("negative.json"), R"({"search": {"budget_needed_s": -3}})");
  CHECK(search::budget_needed(t.file("negative.json")) == 0.0);
  write(t.file("broken.json"), "{not json");
  CHECK(search::budget_needed(t.file("broken.json")) == 0.0);
  CHECK(search::budget_needed(t.file("missing.json")) == 0.0);
}

TEST_CASE("collect: the progress line", "[search]") {
  search::CollectProgress p{4, 57, "landmark", 3, 1, 0, 190, 700};
  const auto line = search::render_progress(p, 120);
  CHECK_THAT(line, Catch::Contains("[ 5/57]") && Catch::Contains("landmark") &&
                       Catch::Contains("ETA 11m40s") && Catch::Contains("elapsed 3m10s"));
  CHECK(search::render_progress(p, 60).size() <= 60);
}

TEST_CASE("collect: a matrix whose tune hangs or crashes fails alone", "[search]") {
  testing::TempDir t("sparsetune-collect-test");
  // Stand-ins for the sparsetune executable: one hangs on the first matrix, one crashes.
  write(t.file("hang.sh"),
        "#!/bin/sh\ncase \"$2\" in *general_real*) exec sleep 30;; esac\necho 'error: tune said "
        "no' >&2\nexit 1\n");
  write(t.file("crash.sh"), "#!/bin/sh\nkill -SEGV $$\n");
  std::filesystem::permissions(t.file("hang.sh"), std::filesystem::perms::owner_all);
  std::filesystem::permissions(t.file("crash.sh"), std::filesystem::perms::owner_all);
  write(t.file("run.list"), data("general_real.mtx") + "\n" + data("symmetric_real.mtx") + "\n");
  const auto items = search::read_collect_list(t.file("run.list"));
  search::CollectOptions o;
  o.db_path = t.file("tuning.db");
  o.compile_only = true;
  o.budget_s = 1;
  o.per_matrix_timeout_s = 1;
  o.work_dir = t.file("work");
  o.program = t.file("hang.sh");
  const auto s = search::collect(items, o);
  REQUIRE(s.items.size() == 2);
  CHECK(s.items[0].status == "failed");
  CHECK_THAT(s.items[0].reason, Catch::Contains("timed out"));
  CHECK(s.items[0].seconds < 15);
  CHECK(s.items[1].status == "failed");
  CHECK_THAT(s.items[1].reason,
             Catch::Contains("error: tune said no") && Catch::Contains("exit status 1"));

  o.program = t.file("crash.sh");
  const auto c = search::collect(items, o);
  CHECK(c.failed == 2);
  CHECK_THAT(c.items[0].reason, Catch::Contains("killed by signal 11"));
}

TEST_CASE("collect: --crux-share reaches each SpMV tune", "[search]") {
  testing::TempDir t("sparsetune-collect-test");
  // A stand-in for the sparsetune executable that says how it was called, then fails.
  write(t.file("args.sh"), "#!/bin/sh\necho \"called with: $*\" >&2\nexit 1\n");
  std::filesystem::permissions(t.file("args.sh"), std::filesystem::perms::owner_all);
  write(t.file("run.list"), data("general_real.mtx") + "\n");
  const auto items = search::read_collect_list(t.file("run.list"));
  search::CollectOptions o;
  o.db_path = t.file("tuning.db");
  o.compile_only = true;
  o.budget_s = 4;
  o.work_dir = t.file("work");
  o.program = t.file("args.sh");
  o.crux_share = 0.6;
  auto s = search::collect(items, o);
  REQUIRE(s.items.size() == 1);
  CHECK_THAT(s.items[0].reason,
             Catch::Contains("--budget 4") && Catch::Contains("--crux-share 0.6"));
  // Left at 0, tune's own default stands: no flag.
  o.crux_share = 0;
  o.db_path = t.file("tuning2.db");
  s = search::collect(items, o);
  CHECK_THAT(s.items[0].reason, !Catch::Contains("--crux-share"));
}
