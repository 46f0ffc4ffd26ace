// Times the host side of the SpTV search's designs on one tensor: every slice in CSR, COO, ELL or
// HYB (design_sptv), and the two batched cuts (16 and 1) sptv_gpu_runs builds of each, split into
// the Designer, the Optimizer, the kernels and the serialisation. Prints a hash of each design's
// outputs, so runs of two builds or thread counts can be compared.
// With "together", a format's design and its cuts are built at once on host threads, as the
// search builds them, and the group's wall time is printed after them.
//   bench_sptv_designs TENSOR MODE [FORMATS, e.g. CSR,COO] [CUTS, e.g. 16,1] [together]
#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <sstream>
#include <string>

#include "bench_util.hpp"
#include "codegen/emit.hpp"
#include "core/sptv_matrix.hpp"
#include "core/version.hpp"
#include "features/slice_graph.hpp"
#include "graph/sptv_graph.hpp"
#include "io/safetensors.hpp"
#include "io/tensor_file.hpp"
#include "models/slice_selector.hpp"

using namespace sparsetune;

namespace {
using bench::since;
using bench::split;

// codegen::generate's steps, each timed: one line.
std::string run(const std::string& label, const graph::Graph& g, const SptvMatrix& m,
                const std::vector<graph::SliceFormat>& format_of) {
  codegen::EmitOptions o;
  o.design = graph::sptv_design_options(m, "f32");
  auto t = std::chrono::steady_clock::now();
  const auto start = t;
  auto f = graph::design(g, m.a, o.design);
  const double design_s = since(t);
  f.sptv = graph::sptv_slices(m, format_of);
  codegen::optimize(f, o.optimizer);
  const double optimize_s = since(t);
  const auto k = codegen::build_kernels(f, g.name, graph::describe(g));
  const double kernels_s = since(t);
  const auto bytes = io::serialize_safetensors(graph::to_safetensors(f, kVersion));
  const auto header = codegen::build_host_header(f, bytes);
  const double bytes_s = since(t);
  const auto hash = std::hash<std::string>{}(bytes) ^ (std::hash<std::string>{}(k.source) * 3) ^
                    (std::hash<std::string>{}(header)*7);
  char line[256];
  std::snprintf(line, sizeof line,
                "%-10s design %7.2f  optimize %6.2f  kernels %5.2f  bytes %5.2f  total %7.2f s  "
                "%8.1f MB  %016zx\n",
                label.c_str(), design_s, optimize_s, kernels_s, bytes_s, since(t = start),
                static_cast<double>(bytes.size()) / 1e6, hash);
  return line;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s TENSOR MODE [FORMATS] [CUTS] [together]\n", argv[0]);
    return 2;
  }
  const auto tensor = io::read_tensor(argv[1]);
  const SptvMatrix m = sptv_matrix(tensor, std::stoi(argv[2]));
  const auto stats = graph::slice_stats(m);
  const auto inputs = features::slice_inputs(m);
  const auto formats = split(argc > 3 ? argv[3] : "CSR,COO,ELL,HYB,rule");
  const auto cuts = split(argc > 4 ? argv[4] : "");
  const bool together = argc > 5 && std::string(argv[5]) == "together";
  for (const auto& name : formats) {
    // As design_sptv: one format on every non-empty slice, or the structural rule's selection.
    std::vector<graph::SliceFormat> format_of(m.slices, graph::SliceFormat::CSR);
    std::vector<char> hyb(static_cast<std::size_t>(m.slices), 0);
    const auto choices =
        name == "rule" ? models::select_formats(inputs) : std::vector<models::SliceChoice>{};
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const int f = name == "rule" ? choices[i].format
                                   : static_cast<int>(*graph::slice_format_from_name(name));
      format_of[inputs[i].slice] = static_cast<graph::SliceFormat>(f);
      if (f == static_cast<int>(graph::SliceFormat::HYB)) hyb[inputs[i].slice] = 1;
    }
    const int width = graph::hyb_width(m, hyb);
    std::vector<std::pair<std::string, graph::Graph>> graphs = {
        {name, graph::sptv_graph(format_of, stats, width)}};
    for (const auto& c : cuts)
      graphs.push_back(
          {name + "/" + c, graph::sptv_batched_graph(format_of, stats, width, std::stoi(c)).graph});
    auto t = std::chrono::steady_clock::now();
    std::vector<std::future<std::string>> lines;
    for (const auto& [label, g] : graphs)
      lines.push_back(
          std::async(together ? std::launch::async : std::launch::deferred,
                     [&, &label = label, &g = g] { return run(label, g, m, format_of); }));
    for (auto& l : lines) std::fputs(l.get().c_str(), stdout);
    if (together) std::printf("%-10s together %.2f s\n", name.c_str(), since(t));
    std::fflush(stdout);
  }
  return 0;
}
