// Slice-GCN multiplies each distinct (node, neighbourhood) row of its second layer once: the
// log-probabilities must be the bits of a plain forward pass that multiplies every node, written
// here from the saved weights alone.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <random>

#include "io/safetensors.hpp"
#include "models/slice_gcn.hpp"

using namespace sparsetune;
using namespace sparsetune::models;

namespace {
using Vec = std::vector<double>;

// c (+)= a · b (n×p times p×q), zero entries of a skipped, k ascending: Slice-GCN's order.
void mul(const Vec& a, const Vec& b, Vec& c, int n, int p, int q) {
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < p; ++k) {
      const double x = a[static_cast<std::size_t>(i) * p + k];
      if (x == 0.0) continue;
      for (int j = 0; j < q; ++j)
        c[static_cast<std::size_t>(i) * q + j] += x * b[static_cast<std::size_t>(k) * q + j];
    }
}

Vec plain_log_probs(const io::SafetensorsFile& w, const features::SliceInput& in) {
  const auto W = [&](const char* name) { return io::get_array<double>(w, name); };
  const int R = in.row_nodes, N = in.row_nodes + in.col_nodes;
  const int C = static_cast<int>(w.at("conv1.bias").shape[1]);
  std::vector<std::vector<int>> nbr(N);
  for (auto [r, c] : in.edges) nbr[r].push_back(R + c);
  for (auto [r, c] : in.edges) nbr[R + c].push_back(r);
  int max_row = 1, max_col = 1;
  for (int i = 0; i < N; ++i) {
    int& m = i < R ? max_row : max_col;
    m = std::max(m, static_cast<int>(nbr[i].size()));
  }
  Vec x(static_cast<std::size_t>(N) * 4);
  for (int i = 0; i < N; ++i) {
    const double d = static_cast<double>(nbr[i].size());
    x[4 * i] = i < R ? 1.0 : 0.0;
    x[4 * i + 1] = i < R ? 0.0 : 1.0;
    x[4 * i + 2] = std::log1p(d) / 4.0;
    x[4 * i + 3] = d / (i < R ? max_row : max_col);
  }
  const auto mean = [&](const Vec& h, int width) {
    Vec o(static_cast<std::size_t>(N) * width, 0.0);
    for (int i = 0; i < N; ++i) {
      if (nbr[i].empty()) continue;
      for (int j : nbr[i])
        for (int k = 0; k < width; ++k) o[i * width + k] += h[j * width + k];
      for (int k = 0; k < width; ++k) o[i * width + k] /= static_cast<double>(nbr[i].size());
    }
    return o;
  };
  const auto layer = [&](const Vec& h, int width, const char* self, const char* nb,
                         const char* bias) {
    Vec p(static_cast<std::size_t>(N) * C, 0.0);
    mul(h, W(self), p, N, width, C);
    mul(mean(h, width), W(nb), p, N, width, C);
    const Vec b = W(bias);
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < C; ++j) p[i * C + j] += b[j];
    for (auto& v : p) v = std::max(v, 0.0);
    return p;
  };
  const Vec h1 = layer(x, 4, "conv1.w_self", "conv1.w_nbr", "conv1.bias");
  const Vec h2 = layer(h1, C, "conv2.w_self", "conv2.w_nbr", "conv2.bias");
  const int G = static_cast<int>(in.globals.size()), U = 2 * C + G;
  Vec u(U, 0.0);
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < C; ++j) {
      u[j] += h1[i * C + j] / N;
      u[C + j] += h2[i * C + j] / N;
    }
  for (int j = 0; j < G; ++j) u[2 * C + j] = std::log1p(std::max(in.globals[j], 0.0));
  Vec q = W("mlp1.bias");
  const int H = static_cast<int>(q.size());
  mul(u, W("mlp1.weight"), q, 1, U, H);
  for (auto& v : q) v = std::max(v, 0.0);
  Vec o = W("mlp2.bias");
  mul(q, W("mlp2.weight"), o, 1, H, static_cast<int>(o.size()));
  const double top = *std::max_element(o.begin(), o.end());
  double z = 0.0;
  for (double v : o) z += std::exp(v - top);
  for (auto& v : o) v -= top + std::log(z);
  return o;
}
}  // namespace

TEST_CASE("Slice-GCN's log-probabilities are a plain forward pass's, bit for bit",
          "[models][gcn]") {
  const SliceGcn g(GcnShape{}, 17);
  const auto path = (std::filesystem::temp_directory_path() /
                     ("sparsetune-gcn-" + std::to_string(::getpid()) + ".safetensors"))
                        .string();
  g.save(path, {});
  const io::SafetensorsFile w = io::read_safetensors(path);
  std::filesystem::remove(path);
  std::mt19937_64 rng(3);
  int repeated = 0;
  for (int t = 0; t < 12; ++t) {
    // Rows of one entry on a few columns repeat each other exactly; t % 3 == 2 mixes in rows of
    // several entries, so some nodes are unlike any other.
    features::SliceInput in;
    in.row_nodes = 20 + static_cast<int>(rng() % 60);
    in.col_nodes = 3 + static_cast<int>(rng() % 12);
    for (int r = 0; r < in.row_nodes; ++r) {
      const int len = t % 3 == 2 ? 1 + static_cast<int>(rng() % 4) : 1;
      for (int k = 0; k < len; ++k)
        in.edges.emplace_back(r, static_cast<std::int32_t>(rng() % in.col_nodes));
    }
    in.globals = {100.0, 50.0, static_cast<double>(in.edges.size()), 1.5, 4, 0, 2.5, 9, 0};
    for (int c = 0; c < in.col_nodes; ++c) {  // every column node holds an edge
      bool used = false;
      for (auto [r, cc] : in.edges) used = used || cc == c;
      if (!used) in.edges.emplace_back(0, c);
    }
    const Vec plain = plain_log_probs(w, in);
    const Vec fast = g.log_probs(in);
    REQUIRE(plain.size() == fast.size());
    for (std::size_t k = 0; k < plain.size(); ++k) CHECK(plain[k] == fast[k]);
    repeated += in.row_nodes > in.col_nodes;
  }
  CHECK(repeated > 0);
}
