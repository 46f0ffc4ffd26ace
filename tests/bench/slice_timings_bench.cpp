// Times the host side of one `slice-gcn collect` job (search::time_slices) without a GPU: the
// sample, then per batch of sampled slices and per slice format the replication, the design, the
// plan inputs (the fp64 reference) and the plan file as the worker would read it. NVRTC and the
// GPU runs are left out. The defaults are collect's (SliceTimingOptions). With "together", a
// batch's formats are replicated and designed on a thread each, as collect builds them, and the
// batch's wall time is printed after them. Memory is reused as sparsetune reuses it
// (reuse_freed_memory) unless "system-malloc" is given.
//   bench_slice_timings TENSOR MODE [MAX_SLICES] [FORMATS, e.g. CSR,ELL] [together] [system-malloc]
#include <array>
#include <chrono>
#include <cstdio>
#include <string>

#include "bench_util.hpp"
#include "codegen/launch_plan.hpp"
#include "core/memory.hpp"
#include "core/parallel_for.hpp"
#include "core/sptv_matrix.hpp"
#include "graph/sptv_graph.hpp"
#include "io/safetensors.hpp"
#include "io/slice_source.hpp"
#include "search/slice_timings.hpp"
#include "search/sptv_gpu.hpp"

using namespace sparsetune;

using bench::since;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s TENSOR MODE [MAX_SLICES] [FORMATS]\n", argv[0]);
    return 2;
  }
  try {
    search::SliceTimingOptions o;
    o.tensor = argv[1];
    o.mode = std::stoi(argv[2]);
    if (argc > 3) o.max_slices = std::stoi(argv[3]);
    bool together = false, system_malloc = false;
    for (int i = 5; i < argc; ++i) {
      const std::string w = argv[i];
      together |= w == "together";
      system_malloc |= w == "system-malloc";
    }
    if (!system_malloc) reuse_freed_memory();
    std::vector<graph::SliceFormat> formats;
    for (const auto& w : bench::split(argc > 4 ? argv[4] : "CSR,COO,ELL,HYB")) {
      const auto before = formats.size();
      for (int f = 0; f < graph::kSliceFormats; ++f)
        if (w == graph::slice_format_name(static_cast<graph::SliceFormat>(f)))
          formats.push_back(static_cast<graph::SliceFormat>(f));
      if (formats.size() == before) {
        std::fprintf(stderr, "%s: no slice format '%s' (CSR, COO, ELL, HYB, Dense)\n", argv[0],
                     w.c_str());
        return 2;
      }
    }

    auto clock = std::chrono::steady_clock::now();
    const auto start = clock;
    const auto t = io::read_slice_source(o.tensor).tensor;
    const auto plan = search::plan_slices(sptv_matrix(t, o.mode), o);
    const auto& chosen = plan.chosen;
    const auto& starts = plan.batch_starts;
    const int h = plan.hyb_width;
    const auto v = search::sptv_check_v(t.dims[o.mode], o.dtype);
    std::printf("read and sample: %.2f s, %zu slices, HYB width %d\n", since(clock), chosen.size(),
                h);
    std::printf("%-6s %-6s %9s %10s %9s %9s %9s %9s\n", "batch", "format", "entries", "replicate",
                "design", "inputs", "file", "MB");
    double sum[4] = {0, 0, 0, 0};
    for (std::size_t b = 0; b + 1 < starts.size(); ++b) {
      const std::vector<std::int64_t> slices(chosen.begin() + starts[b],
                                             chosen.begin() + starts[b + 1]);
      const std::vector<int> n(plan.copies.begin() + starts[b],
                               plan.copies.begin() + starts[b + 1]);
      // One format's steps, each timed on its own clock: one line.
      const auto one = [&](graph::SliceFormat fmt) {
        auto c = std::chrono::steady_clock::now();
        const auto rep = search::replicate_slices(plan.m, slices, n);
        const double rep_s = since(c);
        const auto d = search::design_slices(rep, fmt, h, o.dtype);
        const double design_s = since(c);
        const auto in = codegen::spmv_plan_inputs(o.dtype, rep.view.a, v);
        const double inputs_s = since(c);
        const auto bytes = io::serialize_safetensors(codegen::plan_file(d.plan, {}, 1, &in));
        const double file_s = since(c);
        char line[160];
        std::snprintf(line, sizeof line, "%-6zu %-6s %9lld %9.2fs %8.2fs %8.2fs %8.2fs %9.1f\n", b,
                      graph::slice_format_name(fmt), static_cast<long long>(rep.view.a.nnz()),
                      rep_s, design_s, inputs_s, file_s, static_cast<double>(bytes.size()) / 1e6);
        return std::pair<std::string, std::array<double, 4>>{line,
                                                             {rep_s, design_s, inputs_s, file_s}};
      };
      std::vector<std::pair<std::string, std::array<double, 4>>> rows(formats.size());
      const int k = static_cast<int>(formats.size());
      parallel_for(k, together ? k : 1, [&](int i) { rows[i] = one(formats[i]); });
      for (const auto& [line, s] : rows) {
        std::fputs(line.c_str(), stdout);
        for (int i = 0; i < 4; ++i) sum[i] += s[i];
      }
      if (together) std::printf("batch %zu: %.2f s\n", b, since(clock));
    }
    std::printf("total  %-6s %9s %9.2fs %8.2fs %8.2fs %8.2fs\n", "", "", sum[0], sum[1], sum[2],
                sum[3]);
    std::printf("wall: %.2f s\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
