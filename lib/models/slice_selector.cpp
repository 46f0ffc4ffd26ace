#include "models/slice_selector.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

#include "io/parallel_for.hpp"

namespace sparsetune::models {

int rule_format(const std::vector<double>& g, double non_empty_rows) {
  const double nnz = g.at(2), row_max = g.at(4);
  const double mean = non_empty_rows > 0 ? nnz / non_empty_rows : 0.0;
  if (row_max <= 1.5 * mean + 1.0) return 2;  // ELL
  if (mean < 2.0) return 1;                   // COO
  if (row_max > 8.0 * mean) return 3;         // HYB
  return 0;                                   // CSR
}

std::vector<SliceChoice> select_formats(const std::vector<features::SliceInput>& slices,
                                        const SelectOptions& o) {
  std::vector<SliceChoice> out(slices.size());
  auto choose = [&](std::size_t i) {
    const auto& s = slices[i];
    SliceChoice& c = out[i];
    c.slice = s.slice;
    if (s.density >= o.sparsity_threshold) {
      c.format = 4;
      c.by = "density";
    } else if (o.gcn) {
      c.format = o.gcn->predict(s);
      c.by = "slice-gcn";
    } else {
      c.format = rule_format(s.globals, static_cast<double>(s.nonempty_rows));
      c.by = "rule";
    }
  };
  // Slice-GCN's inference is independent per slice and dominates on tensors of 10^5 slices:
  // chunks of slices go to every core (each choice lands in its own slot, so the result is the
  // same for any thread count).
  constexpr std::size_t kChunk = 64;
  const int chunks = static_cast<int>((slices.size() + kChunk - 1) / kChunk);
  const int threads =
      o.gcn ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) : 1;
  io::detail::parallel_for(chunks, threads, [&](int k) {
    const std::size_t end = std::min(slices.size(), (static_cast<std::size_t>(k) + 1) * kChunk);
    for (std::size_t i = static_cast<std::size_t>(k) * kChunk; i < end; ++i) choose(i);
  });
  return out;
}

}  // namespace sparsetune::models
