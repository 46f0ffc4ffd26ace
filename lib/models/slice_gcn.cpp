#include "models/slice_gcn.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <thread>
#include <unordered_map>

#include "core/error.hpp"
#include "io/safetensors.hpp"

namespace sparsetune::models {

namespace {

using Vec = std::vector<double>;

// The products' inner loops run along a row and vectorize; wider vectors give the same bits
// (no fused multiply-add, no reassociation), so the widest the CPU has is picked at load time.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SPARSETUNE_WIDE_LOOPS __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SPARSETUNE_WIDE_LOOPS
#endif

// c[n×q] (+)= a[n×p] · b[p×q], row-major.
SPARSETUNE_WIDE_LOOPS void matmul(const double* a, const double* b, double* c, int n, int p, int q,
                                  bool add = false) {
  if (!add) std::fill(c, c + static_cast<std::size_t>(n) * q, 0.0);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < p; ++k) {
      const double x = a[static_cast<std::size_t>(i) * p + k];
      if (x == 0.0) continue;
      const double* br = b + static_cast<std::size_t>(k) * q;
      double* cr = c + static_cast<std::size_t>(i) * q;
      for (int j = 0; j < q; ++j) cr[j] += x * br[j];
    }
}
// c[p×q] += aᵀ · b with a[n×p], b[n×q].
SPARSETUNE_WIDE_LOOPS void matmul_tn(const double* a, const double* b, double* c, int n, int p,
                                     int q) {
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < p; ++k) {
      const double x = a[static_cast<std::size_t>(i) * p + k];
      if (x == 0.0) continue;
      const double* br = b + static_cast<std::size_t>(i) * q;
      double* cr = c + static_cast<std::size_t>(k) * q;
      for (int j = 0; j < q; ++j) cr[j] += x * br[j];
    }
}
// c[n×p] += a[n×q] · bᵀ with b[p×q].
void matmul_nt(const double* a, const double* b, double* c, int n, int q, int p) {
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < p; ++k) {
      const double* ar = a + static_cast<std::size_t>(i) * q;
      const double* br = b + static_cast<std::size_t>(k) * q;
      double s = 0.0;
      for (int j = 0; j < q; ++j) s += ar[j] * br[j];
      c[static_cast<std::size_t>(i) * p + k] += s;
    }
}

// The element-wise steps of the forward pass, each in the order the plain loops had (so the same
// bits), on the widest vectors: p[i×c] += bias per row; h = max(p, 0); u += h's rows / n.
SPARSETUNE_WIDE_LOOPS void add_bias(double* p, const double* bias, int n, int c) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < c; ++j) p[static_cast<std::size_t>(i) * c + j] += bias[j];
}
SPARSETUNE_WIDE_LOOPS void relu(const double* p, double* h, std::size_t size) {
  for (std::size_t k = 0; k < size; ++k) h[k] = std::max(p[k], 0.0);
}
SPARSETUNE_WIDE_LOOPS void add_mean(const double* h, double* u, int n, int c) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < c; ++j) u[j] += h[static_cast<std::size_t>(i) * c + j] / n;
}

// Slice graphs repeat themselves (a row of one entry whose column looks like another's), and
// in the second layer a node's row of every product is a function of its rows of h and a alone.
// Nodes with equal rows form a group: the layer multiplies one row per group, forward and
// backward, and copies or weights it by the group's size, which saves most of the layer's time.
struct Groups {
  std::vector<int> first;    // a node of each group
  std::vector<int> of;       // each node's group
  std::vector<double> size;  // nodes in each group
};

// A row's hash: the sum of its values' bits, each times its own odd key (independent products
// that vectorize, where a chain of multiply-xorshift steps waits on each one), then mixed. Only
// equal rows must hash alike; `same` decides.
SPARSETUNE_WIDE_LOOPS std::uint64_t keyed_sum(const double* v, const std::uint64_t* key,
                                              std::size_t n) {
  std::uint64_t x = 0;
  for (std::size_t k = 0; k < n; ++k) {
    std::uint64_t bits;
    std::memcpy(&bits, v + k, sizeof bits);
    x += bits * key[k];
  }
  return x;
}

Groups group_rows(const Vec& h, const Vec& a, int n, int c) {
  const std::size_t row = static_cast<std::size_t>(c);
  std::vector<std::uint64_t> key(2 * row);
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  for (auto& k : key) {  // splitmix64, made odd
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    k = (z ^ (z >> 31)) | 1;
  }
  const auto pair_hash = [&](int i) {
    std::uint64_t x =
        keyed_sum(&h[i * row], key.data(), row) + keyed_sum(&a[i * row], key.data() + row, row);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    return x ^ (x >> 33);
  };
  const auto same = [&](int i, int j) {
    return std::memcmp(&h[i * row], &h[j * row], row * sizeof(double)) == 0 &&
           std::memcmp(&a[i * row], &a[j * row], row * sizeof(double)) == 0;
  };
  Groups g;
  g.of.resize(n);
  std::unordered_multimap<std::uint64_t, int> seen;  // hash -> group
  for (int i = 0; i < n; ++i) {
    const std::uint64_t key = pair_hash(i);
    int found = -1;
    for (auto [it, end] = seen.equal_range(key); it != end && found < 0; ++it)
      if (same(g.first[it->second], i)) found = it->second;
    if (found < 0) {
      found = static_cast<int>(g.first.size());
      g.first.push_back(i);
      g.size.push_back(0.0);
      seen.emplace(key, found);
    }
    g.of[i] = found;
    g.size[found] += 1.0;
  }
  return g;
}

// The groups' rows of v (width c).
Vec group_rows_of(const Groups& g, const Vec& v, int c) {
  const std::size_t row = static_cast<std::size_t>(c), u = g.first.size();
  Vec out(u * row);
  for (std::size_t k = 0; k < u; ++k) std::copy_n(&v[g.first[k] * row], row, &out[k * row]);
  return out;
}

// Each group's row of rows (width c) times the group's size.
void scale_by_size(const Groups& g, Vec& rows, int c) {
  const std::size_t row = static_cast<std::size_t>(c);
  for (std::size_t k = 0; k < g.first.size(); ++k)
    for (std::size_t j = 0; j < row; ++j) rows[k * row + j] *= g.size[k];
}

// Every node's row of out (width c) is its group's row of `rows`.
void spread(const Groups& g, const Vec& rows, Vec& out, int c) {
  const std::size_t row = static_cast<std::size_t>(c);
  for (std::size_t i = 0; i < g.of.size(); ++i)
    std::copy_n(&rows[g.of[i] * row], row, &out[i * row]);
}

// w[c×c] transposed, so that products with it run along rows.
Vec transposed(const double* w, int c) {
  Vec t(static_cast<std::size_t>(c) * c);
  for (int i = 0; i < c; ++i)
    for (int j = 0; j < c; ++j)
      t[static_cast<std::size_t>(j) * c + i] = w[static_cast<std::size_t>(i) * c + j];
  return t;
}

// The bipartite graph as symmetric adjacency lists: rows first, then columns.
struct Adjacency {
  int n = 0;
  std::vector<int> ptr, nbr;
};

Adjacency adjacency(const features::SliceInput& in) {
  Adjacency g;
  g.n = in.row_nodes + in.col_nodes;
  g.ptr.assign(g.n + 1, 0);
  for (const auto& [r, c] : in.edges) {
    if (r < 0 || r >= in.row_nodes || c < 0 || c >= in.col_nodes)
      throw Error("slice graph: edge outside its nodes");
    ++g.ptr[r + 1], ++g.ptr[in.row_nodes + c + 1];
  }
  for (int i = 0; i < g.n; ++i) g.ptr[i + 1] += g.ptr[i];
  g.nbr.resize(g.ptr[g.n]);
  std::vector<int> at(g.ptr.begin(), g.ptr.end() - 1);
  for (const auto& [r, c] : in.edges) {
    g.nbr[at[r]++] = in.row_nodes + c;
    g.nbr[at[in.row_nodes + c]++] = r;
  }
  return g;
}

// out[i] = mean (or sum) of h over i's neighbours (0 for an isolated node); width w.
SPARSETUNE_WIDE_LOOPS void aggregate(const Adjacency& g, const Vec& h, Vec& out, int w, bool sum) {
  out.assign(static_cast<std::size_t>(g.n) * w, 0.0);
  for (int i = 0; i < g.n; ++i) {
    const int deg = g.ptr[i + 1] - g.ptr[i];
    if (deg == 0) continue;
    double* o = &out[static_cast<std::size_t>(i) * w];
    for (int e = g.ptr[i]; e < g.ptr[i + 1]; ++e) {
      const double* x = &h[static_cast<std::size_t>(g.nbr[e]) * w];
      for (int j = 0; j < w; ++j) o[j] += x[j];
    }
    if (!sum)
      for (int j = 0; j < w; ++j) o[j] /= deg;
  }
}
// The adjoint of aggregate: d h[j] += d out[i] (/ deg(i) for the mean) for every neighbour j of i.
SPARSETUNE_WIDE_LOOPS void aggregate_t(const Adjacency& g, const Vec& dout, Vec& dh, int w,
                                       bool sum) {
  for (int i = 0; i < g.n; ++i) {
    const int deg = g.ptr[i + 1] - g.ptr[i];
    if (deg == 0) continue;
    const double* d = &dout[static_cast<std::size_t>(i) * w];
    const double s = sum ? 1.0 : 1.0 / deg;
    for (int e = g.ptr[i]; e < g.ptr[i + 1]; ++e) {
      double* x = &dh[static_cast<std::size_t>(g.nbr[e]) * w];
      for (int j = 0; j < w; ++j) x[j] += d[j] * s;
    }
  }
}

Vec node_features_of(const features::SliceInput& in, const Adjacency& g, int F) {
  int max_row = 1, max_col = 1;
  for (int i = 0; i < g.n; ++i) {
    const int d = g.ptr[i + 1] - g.ptr[i];
    (i < in.row_nodes ? max_row : max_col) = std::max(i < in.row_nodes ? max_row : max_col, d);
  }
  Vec x(static_cast<std::size_t>(g.n) * F, 0.0);
  for (int i = 0; i < g.n; ++i) {
    const bool row = i < in.row_nodes;
    const double d = g.ptr[i + 1] - g.ptr[i];
    double* xi = x.data() + static_cast<std::size_t>(i) * F;
    xi[0] = row ? 1.0 : 0.0;
    xi[1] = row ? 0.0 : 1.0;
    xi[2] = std::log1p(d) / 4.0;
    xi[3] = d / (row ? max_row : max_col);
    if (F == kGcnNodeFeaturesWithBuckets) {
      // The degree's power-of-two bucket, one-hot: 1, 2, 3-4, 5-8, ..., 65 and more.
      int b = 0;
      while (b < kGcnDegreeBuckets - 1 && d > static_cast<double>(1 << b)) ++b;
      xi[4 + b] = 1.0;
    }
  }
  return x;
}

std::vector<std::string> node_feature_names(int f) {
  std::vector<std::string> n = {"is_row", "is_col", "log1p_degree/4", "degree/max_degree_of_side"};
  if (f == kGcnNodeFeaturesWithBuckets) {
    for (int b = 0; b < kGcnDegreeBuckets - 1; ++b)
      n.push_back("degree_in_(" + std::to_string(b == 0 ? 0 : 1 << (b - 1)) + "," +
                  std::to_string(1 << b) + "]");
    n.push_back("degree_over_" + std::to_string(1 << (kGcnDegreeBuckets - 2)));
  }
  return n;
}

}  // namespace

std::vector<double> gcn_node_features(const features::SliceInput& in, int node_features) {
  if (!valid_node_features(node_features)) throw Error("slice-gcn: bad node feature count");
  return node_features_of(in, adjacency(in), node_features);
}

bool valid_node_features(int f) { return f == 4 || f == kGcnNodeFeaturesWithBuckets; }

namespace {
// The MLP's inputs: both layers' pooled channels, the standardized globals, their bins.
std::size_t mlp_inputs(const GcnShape& s) {
  return 2 * static_cast<std::size_t>(s.conv) +
         static_cast<std::size_t>(s.globals) * (1 + static_cast<std::size_t>(s.global_bins));
}

// A global as the model reads it, before standardizing or binning: log(1 + x), negatives as 0.
double log_global(double x) { return std::log1p(std::max(x, 0.0)); }
}  // namespace

void encode_piecewise(double v, const double* edges, int bins, double* out) {
  for (int t = 0; t < bins; ++t) {
    const double lo = edges[t], hi = edges[t + 1];
    out[t] = hi > lo ? std::clamp((v - lo) / (hi - lo), 0.0, 1.0) : (v >= hi ? 1.0 : 0.0);
  }
}

// Offsets of each weight in the flat vector.
struct SliceGcn::Layout {
  std::size_t w1s, w1n, b1, w2s, w2n, b2, m1, c1, m2, c2, total;
  explicit Layout(const GcnShape& s) {
    const std::size_t f = s.node_features, c = s.conv, h = s.hidden, in = mlp_inputs(s);
    w1s = 0;
    w1n = w1s + f * c;
    b1 = w1n + f * c;
    w2s = b1 + c;
    w2n = w2s + c * c;
    b2 = w2n + c * c;
    m1 = b2 + c;
    c1 = m1 + in * h;
    m2 = c1 + h;
    c2 = m2 + h * s.classes;
    total = c2 + s.classes;
  }
};

namespace {
// The names of a model's first `count` global features.
std::vector<std::string> global_names(int count) {
  const auto& all = features::global_feature_names();
  return {all.begin(), all.begin() + std::min<std::size_t>(count, all.size())};
}

struct Tensor {
  const char* name;
  std::size_t offset, rows, cols;
};
std::vector<Tensor> tensors(const GcnShape& s, std::size_t w1s, std::size_t w1n, std::size_t b1,
                            std::size_t w2s, std::size_t w2n, std::size_t b2, std::size_t m1,
                            std::size_t c1, std::size_t m2, std::size_t c2) {
  const std::size_t f = s.node_features, c = s.conv, h = s.hidden, in = mlp_inputs(s),
                    k = s.classes;
  return {{"conv1.w_self", w1s, f, c}, {"conv1.w_nbr", w1n, f, c}, {"conv1.bias", b1, 1, c},
          {"conv2.w_self", w2s, c, c}, {"conv2.w_nbr", w2n, c, c}, {"conv2.bias", b2, 1, c},
          {"mlp1.weight", m1, in, h},  {"mlp1.bias", c1, 1, h},    {"mlp2.weight", m2, h, k},
          {"mlp2.bias", c2, 1, k}};
}
}  // namespace

SliceGcn::SliceGcn(GcnShape shape, std::uint64_t seed) : shape_(shape) {
  if (!valid_node_features(shape.node_features) || shape.conv < 1 || shape.hidden < 1 ||
      shape.globals < 0 ||
      shape.globals > static_cast<int>(features::global_feature_names().size()) ||
      shape.classes < 2 || shape.global_bins < 0 || shape.global_bins > kMaxGlobalBins)
    throw Error("slice-gcn: bad shape");
  const Layout l(shape_);
  w_.assign(l.total, 0.0);
  gmean_.assign(shape_.globals, 0.0);
  gstd_.assign(shape_.globals, 1.0);
  gedges_.assign(static_cast<std::size_t>(shape_.globals) * (shape_.global_bins + 1), 0.0);
  std::mt19937_64 rng(seed);
  // Glorot-uniform weights, zero biases.
  for (const auto& t :
       tensors(shape_, l.w1s, l.w1n, l.b1, l.w2s, l.w2n, l.b2, l.m1, l.c1, l.m2, l.c2)) {
    if (t.rows == 1) continue;
    const double a = std::sqrt(6.0 / static_cast<double>(t.rows + t.cols));
    for (std::size_t i = 0; i < t.rows * t.cols; ++i)
      w_[t.offset + i] = (static_cast<double>(rng() >> 11) * 0x1.0p-53 * 2.0 - 1.0) * a;
  }
}

double SliceGcn::loss(const features::SliceInput& in, int label, std::vector<double>* grad) const {
  if (label < 0 || label >= shape_.classes) throw Error("slice-gcn: label out of range");
  if (grad && grad->size() != w_.size()) throw Error("slice-gcn: gradient of the wrong size");
  return run(in, label, nullptr, grad);
}

double SliceGcn::loss(const features::SliceInput& in, const std::vector<double>& target,
                      std::vector<double>* grad) const {
  if (static_cast<int>(target.size()) != shape_.classes)
    throw Error("slice-gcn: a target needs one probability per class");
  if (grad && grad->size() != w_.size()) throw Error("slice-gcn: gradient of the wrong size");
  return run(in, 0, target.data(), grad);
}

// Forward pass, and the backward pass when `grad` is given. label -1: inference, the
// log-probabilities go into `grad`. With `target`, the loss is the cross-entropy against it and
// `label` is not read.
double SliceGcn::run(const features::SliceInput& in, int label, const double* target,
                     std::vector<double>* grad) const {
  const Layout l(shape_);
  const int F = shape_.node_features, C = shape_.conv, H = shape_.hidden, G = shape_.globals,
            K = shape_.classes, B = shape_.global_bins, U = static_cast<int>(mlp_inputs(shape_));
  if (static_cast<int>(in.globals.size()) < G) throw Error("slice-gcn: too few globals");
  const double* w = w_.data();
  const Adjacency g = adjacency(in);
  const int N = g.n;
  // Forward.
  const Vec x = node_features_of(in, g, F);
  Vec a1, p1(static_cast<std::size_t>(N) * C), h1, a2, p2(static_cast<std::size_t>(N) * C), h2;
  aggregate(g, x, a1, F, shape_.sum_aggregation);
  matmul(x.data(), w + l.w1s, p1.data(), N, F, C);
  matmul(a1.data(), w + l.w1n, p1.data(), N, F, C, true);
  add_bias(p1.data(), w + l.b1, N, C);
  h1.resize(p1.size());
  relu(p1.data(), h1.data(), p1.size());
  aggregate(g, h1, a2, C, shape_.sum_aggregation);
  const Groups grp = group_rows(h1, a2, N, C);
  const int Ug = static_cast<int>(grp.first.size());
  Vec h1u = group_rows_of(grp, h1, C), a2u = group_rows_of(grp, a2, C);
  {
    Vec p2u(static_cast<std::size_t>(Ug) * C);
    matmul(h1u.data(), w + l.w2s, p2u.data(), Ug, C, C);
    matmul(a2u.data(), w + l.w2n, p2u.data(), Ug, C, C, true);
    spread(grp, p2u, p2, C);
  }
  add_bias(p2.data(), w + l.b2, N, C);
  h2.resize(p2.size());
  relu(p2.data(), h2.data(), p2.size());
  Vec u(U, 0.0);
  add_mean(h1.data(), u.data(), N, C);
  add_mean(h2.data(), u.data() + C, N, C);
  for (int j = 0; j < G; ++j) {
    const double v = log_global(in.globals[j]);
    u[2 * C + j] = (v - gmean_[j]) / gstd_[j];
    if (B > 0)
      encode_piecewise(v, gedges_.data() + static_cast<std::size_t>(j) * (B + 1), B,
                       u.data() + 2 * C + G + j * B);
  }
  Vec q(H), a(H), o(K);
  for (int j = 0; j < H; ++j) q[j] = w[l.c1 + j];
  matmul(u.data(), w + l.m1, q.data(), 1, U, H, true);
  for (int j = 0; j < H; ++j) a[j] = std::max(q[j], 0.0);
  for (int j = 0; j < K; ++j) o[j] = w[l.c2 + j];
  matmul(a.data(), w + l.m2, o.data(), 1, H, K, true);
  const double top = *std::max_element(o.begin(), o.end());
  double z = 0.0;
  for (double v : o) z += std::exp(v - top);
  const double lse = top + std::log(z);
  if (label < 0) {  // inference: the log-probabilities in `grad`
    if (grad)
      for (int j = 0; j < K; ++j) (*grad)[j] = o[j] - lse;
    return 0.0;
  }
  double nll = 0.0;
  if (target)
    for (int j = 0; j < K; ++j) nll += target[j] * (lse - o[j]);
  else
    nll = lse - o[label];
  if (!grad) return nll;

  // Backward.
  double* d = grad->data();
  Vec dout(K);
  for (int j = 0; j < K; ++j)
    dout[j] = std::exp(o[j] - lse) - (target ? target[j] : j == label ? 1.0 : 0.0);
  matmul_tn(a.data(), dout.data(), d + l.m2, 1, H, K);
  for (int j = 0; j < K; ++j) d[l.c2 + j] += dout[j];
  Vec dq(H, 0.0);
  matmul_nt(dout.data(), w + l.m2, dq.data(), 1, K, H);
  for (int j = 0; j < H; ++j) dq[j] = q[j] > 0.0 ? dq[j] : 0.0;
  matmul_tn(u.data(), dq.data(), d + l.m1, 1, U, H);
  for (int j = 0; j < H; ++j) d[l.c1 + j] += dq[j];
  Vec du(U, 0.0);
  matmul_nt(dq.data(), w + l.m1, du.data(), 1, H, U);
  // Pooling: every node gets 1/N of the pooled gradient.
  Vec dp2(static_cast<std::size_t>(N) * C);
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < C; ++j) {
      const std::size_t k = static_cast<std::size_t>(i) * C + j;
      dp2[k] = p2[k] > 0.0 ? du[C + j] / N : 0.0;
    }
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < C; ++j) d[l.b2 + j] += dp2[static_cast<std::size_t>(i) * C + j];
  // A group's nodes share their rows of dp2: the weights' gradients take each group's row
  // times its size, and dh1 and da2 are spread from the groups' rows.
  const Vec dp2u = group_rows_of(grp, dp2, C);
  Vec dh1(static_cast<std::size_t>(N) * C), da2(static_cast<std::size_t>(N) * C);
  {
    // The forward pass's group rows, no longer needed as they were.
    scale_by_size(grp, h1u, C);
    scale_by_size(grp, a2u, C);
    matmul_tn(h1u.data(), dp2u.data(), d + l.w2s, Ug, C, C);
    matmul_tn(a2u.data(), dp2u.data(), d + l.w2n, Ug, C, C);
    Vec t(static_cast<std::size_t>(Ug) * C);
    matmul(dp2u.data(), transposed(w + l.w2s, C).data(), t.data(), Ug, C, C);
    spread(grp, t, dh1, C);
    matmul(dp2u.data(), transposed(w + l.w2n, C).data(), t.data(), Ug, C, C);
    spread(grp, t, da2, C);
  }
  aggregate_t(g, da2, dh1, C, shape_.sum_aggregation);
  Vec dp1(static_cast<std::size_t>(N) * C);
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < C; ++j) {
      const std::size_t k = static_cast<std::size_t>(i) * C + j;
      dp1[k] = p1[k] > 0.0 ? dh1[k] + du[j] / N : 0.0;
    }
  matmul_tn(x.data(), dp1.data(), d + l.w1s, N, F, C);
  matmul_tn(a1.data(), dp1.data(), d + l.w1n, N, F, C);
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < C; ++j) d[l.b1 + j] += dp1[static_cast<std::size_t>(i) * C + j];
  return nll;
}

std::vector<double> SliceGcn::own_log_probs(const features::SliceInput& in) const {
  std::vector<double> lp(shape_.classes);
  run(in, -1, nullptr, &lp);
  return lp;
}

std::vector<double> SliceGcn::log_probs(const features::SliceInput& in) const {
  auto lp = own_log_probs(in);
  if (members_.empty()) return lp;
  // The networks' mean probability per class, as a log: log((1/n) sum_k exp(lp_k)), each class
  // shifted by its largest log-probability so that no exp underflows to a 0 for all of them.
  std::vector<std::vector<double>> all = {lp};
  for (const auto& m : members_) all.push_back(m.own_log_probs(in));
  const double n = static_cast<double>(all.size());
  for (int j = 0; j < shape_.classes; ++j) {
    double top = all[0][j];
    for (const auto& a : all) top = std::max(top, a[j]);
    double sum = 0.0;
    for (const auto& a : all) sum += std::exp(a[j] - top);
    lp[j] = top + std::log(sum / n);
  }
  return lp;
}

void SliceGcn::add_member(SliceGcn member) {
  if (!(member.shape_ == shape_)) throw Error("slice-gcn: a bag's networks must have one shape");
  if (!member.members_.empty()) throw Error("slice-gcn: a bag's member is one network");
  if (bag_size() >= kMaxBag)
    throw Error("slice-gcn: a bag holds at most " + std::to_string(kMaxBag) + " networks");
  members_.push_back(std::move(member));
}

int SliceGcn::predict(const features::SliceInput& in) const {
  const auto lp = log_probs(in);
  return static_cast<int>(std::max_element(lp.begin(), lp.end()) - lp.begin());
}

std::vector<double> SliceGcn::train(const std::vector<features::SliceInput>& x,
                                    const std::vector<int>& labels, const GcnTrainOptions& o,
                                    const std::vector<std::vector<double>>* targets) {
  if (x.empty() || x.size() != labels.size())
    throw Error("slice-gcn: training needs one label per sample, and at least one sample");
  if (targets && targets->size() != x.size())
    throw Error("slice-gcn: training needs one target per sample");
  if (o.epochs < 1) throw Error("slice-gcn: epochs must be at least 1");
  if (o.batch < 1) throw Error("slice-gcn: the batch must hold at least 1 slice");
  if (!(o.learning_rate > 0) || !std::isfinite(o.learning_rate))
    throw Error("slice-gcn: the learning rate must be a positive number");
  if (!(o.weight_decay >= 0) || !std::isfinite(o.weight_decay))
    throw Error("slice-gcn: the weight decay must be 0 or more");
  if (o.average_last < 0 || o.average_last > o.epochs)
    throw Error("slice-gcn: average_last " + std::to_string(o.average_last) +
                " must be between 0 and the epochs (" + std::to_string(o.epochs) + ")");
  // The globals standardized over the training samples (a constant feature keeps a scale of 1).
  const int G = shape_.globals;
  std::fill(gmean_.begin(), gmean_.end(), 0.0);
  std::fill(gstd_.begin(), gstd_.end(), 0.0);
  for (const auto& in : x) {
    if (static_cast<int>(in.globals.size()) < G) throw Error("slice-gcn: too few globals");
    for (int j = 0; j < G; ++j) gmean_[j] += log_global(in.globals[j]);
  }
  for (auto& v : gmean_) v /= static_cast<double>(x.size());
  for (const auto& in : x)
    for (int j = 0; j < G; ++j) {
      const double d = log_global(in.globals[j]) - gmean_[j];
      gstd_[j] += d * d;
    }
  for (auto& v : gstd_) {
    v = std::sqrt(v / static_cast<double>(x.size()));
    if (!(v > 1e-9)) v = 1.0;
  }
  // The bins' edges: quantiles 0, 1/B, ..., 1 of each global over the training samples.
  const int B = shape_.global_bins;
  if (B > 0) {
    std::vector<double> col(x.size());
    for (int j = 0; j < G; ++j) {
      for (std::size_t i = 0; i < x.size(); ++i) col[i] = log_global(x[i].globals[j]);
      std::sort(col.begin(), col.end());
      for (int t = 0; t <= B; ++t)
        gedges_[static_cast<std::size_t>(j) * (B + 1) + t] =
            col[(col.size() - 1) * static_cast<std::size_t>(t) / static_cast<std::size_t>(B)];
    }
  }
  std::mt19937_64 rng(o.seed);
  std::vector<std::size_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  Vec m(w_.size(), 0.0), v(w_.size(), 0.0), grad(w_.size());
  Vec mean(o.average_last > 0 ? w_.size() : 0, 0.0);  // the averaged epochs' weights
  std::vector<Vec> per;
  const unsigned threads = o.threads > 0 ? static_cast<unsigned>(o.threads)
                                         : std::max(1u, std::thread::hardware_concurrency());
  std::int64_t step = 0;
  std::vector<double> epoch_loss;
  for (int e = 0; e < o.epochs; ++e) {
    // Fisher-Yates with the engine's raw output: the same order on every standard library.
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
    double total = 0.0;
    for (std::size_t b = 0; b < order.size(); b += o.batch) {
      const std::size_t end = std::min(order.size(), b + static_cast<std::size_t>(o.batch));
      // The batch's samples on all threads, each into its own gradient, summed in sample order:
      // the same model whatever the thread count.
      const std::size_t n = end - b;
      if (per.size() < n) per.resize(n, Vec(w_.size()));
      std::vector<double> losses(n);
      std::atomic<std::size_t> next{0};
      auto work = [&] {
        for (std::size_t i; (i = next.fetch_add(1)) < n;) {
          std::fill(per[i].begin(), per[i].end(), 0.0);
          const std::size_t s = order[b + i];
          losses[i] = targets ? loss(x[s], (*targets)[s], &per[i]) : loss(x[s], labels[s], &per[i]);
        }
      };
      std::vector<std::thread> pool;
      for (unsigned t = 1; t < std::min<std::size_t>(threads, n); ++t) pool.emplace_back(work);
      work();
      for (auto& t : pool) t.join();
      std::fill(grad.begin(), grad.end(), 0.0);
      for (std::size_t i = 0; i < n; ++i) {
        total += losses[i];
        for (std::size_t k = 0; k < w_.size(); ++k) grad[k] += per[i][k];
      }
      const double scale = 1.0 / static_cast<double>(end - b);
      ++step;
      const double c1 = 1.0 - std::pow(b1, static_cast<double>(step));
      const double c2 = 1.0 - std::pow(b2, static_cast<double>(step));
      for (std::size_t k = 0; k < w_.size(); ++k) {
        const double gk = grad[k] * scale;
        m[k] = b1 * m[k] + (1 - b1) * gk;
        v[k] = b2 * v[k] + (1 - b2) * gk * gk;
        w_[k] -=
            o.learning_rate * ((m[k] / c1) / (std::sqrt(v[k] / c2) + eps) + o.weight_decay * w_[k]);
      }
    }
    epoch_loss.push_back(total / static_cast<double>(x.size()));
    // A step too large diverges; its weights are no model, and nothing after it recovers.
    if (!std::isfinite(epoch_loss.back())) {
      char rates[96];
      std::snprintf(rates, sizeof rates, "learning rate %g, weight decay %g", o.learning_rate,
                    o.weight_decay);
      throw Error("slice-gcn: the training loss is not finite after epoch " +
                  std::to_string(e + 1) + " (" + rates + "): lower them");
    }
    if (e >= o.epochs - o.average_last)
      for (std::size_t k = 0; k < w_.size(); ++k) mean[k] += w_[k] / o.average_last;
  }
  if (o.average_last > 0) w_ = mean;
  return epoch_loss;
}

double SliceGcn::accuracy(const std::vector<features::SliceInput>& x,
                          const std::vector<int>& labels) const {
  if (x.empty()) return 0.0;
  std::size_t right = 0;
  for (std::size_t i = 0; i < x.size(); ++i) right += predict(x[i]) == labels.at(i);
  return static_cast<double>(right) / static_cast<double>(x.size());
}

const std::vector<std::string>& slice_format_classes() {
  static const std::vector<std::string> c = {"CSR", "COO", "ELL", "HYB", "Dense"};
  return c;
}

namespace {
// The arrays of network k of a bag: the usual names for the first, "bag.<k>." before them after.
std::string bag_prefix(int k) { return k == 0 ? "" : "bag." + std::to_string(k) + "."; }
}  // namespace

void SliceGcn::save(const std::string& path, const GcnModelInfo& info) const {
  const Layout l(shape_);
  io::SafetensorsFile f;
  const std::int64_t g = shape_.globals;
  const auto arrays =
      tensors(shape_, l.w1s, l.w1n, l.b1, l.w2s, l.w2n, l.b2, l.m1, l.c1, l.m2, l.c2);
  for (int k = 0; k < bag_size(); ++k) {
    const SliceGcn& net = k == 0 ? *this : members_[static_cast<std::size_t>(k - 1)];
    const std::string pre = bag_prefix(k);
    for (const auto& t : arrays) {
      std::vector<double> v(
          net.w_.begin() + static_cast<std::ptrdiff_t>(t.offset),
          net.w_.begin() + static_cast<std::ptrdiff_t>(t.offset + t.rows * t.cols));
      io::add_array(f, pre + t.name, v,
                    {static_cast<std::int64_t>(t.rows), static_cast<std::int64_t>(t.cols)});
    }
    io::add_array(f, pre + "globals.mean", net.gmean_, {1, g});
    io::add_array(f, pre + "globals.std", net.gstd_, {1, g});
    if (shape_.global_bins > 0)
      io::add_array(f, pre + "globals.edges", net.gedges_, {g, shape_.global_bins + 1});
  }
  nlohmann::json shape{{"node_features", shape_.node_features},
                       {"conv", shape_.conv},
                       {"hidden", shape_.hidden},
                       {"globals", shape_.globals},
                       {"classes", shape_.classes},
                       {"aggregation", shape_.sum_aggregation ? "sum" : "mean"}};
  // Written only when used, so that a model without bins is the file it always was.
  if (shape_.global_bins > 0) shape["global_bins"] = shape_.global_bins;
  f.metadata = {
      {"format", "sparsetune-slice-gcn"},
      {"format_version", std::to_string(members_.empty() ? kFormatVersion : kBagFormatVersion)},
      {"shape", shape.dump()},
      {"node_features", nlohmann::json(node_feature_names(shape_.node_features)).dump()},
      {"global_features", nlohmann::json(global_names(shape_.globals)).dump()},
      {"global_input", shape_.global_bins > 0
                           ? "(log1p(x) - globals.mean) / globals.std, then log1p(x) over the "
                             "bins of globals.edges, piecewise linearly"
                           : "(log1p(x) - globals.mean) / globals.std"},
      {"classes", nlohmann::json(slice_format_classes()).dump()},
      {"arch", info.arch},
      {"date", info.date},
      {"labels", info.labels},
      {"sparsity_threshold", nlohmann::json(info.sparsity_threshold).dump()},
      {"notes", info.notes}};
  if (!info.test_slices.empty())
    f.metadata["test_slices"] = nlohmann::json(info.test_slices).dump();
  if (!members_.empty()) f.metadata["bag"] = std::to_string(bag_size());
  io::write_safetensors(path, f);
}

SliceGcn SliceGcn::load(const std::string& path, GcnModelInfo* info) {
  const auto f = io::read_safetensors(path);
  auto bad = [&](const std::string& what) { return InputError(path, 0, "slice-gcn: " + what); };
  auto meta = [&](const char* k) -> const std::string& {
    auto it = f.metadata.find(k);
    if (it == f.metadata.end()) throw bad(std::string("metadata has no '") + k + "'");
    return it->second;
  };
  if (meta("format") != "sparsetune-slice-gcn") throw bad("not a Slice-GCN model");
  const std::string version = meta("format_version");
  if (version != std::to_string(kFormatVersion) && version != std::to_string(kBagFormatVersion))
    throw bad("format_version " + version + " (this build reads " + std::to_string(kFormatVersion) +
              " and " + std::to_string(kBagFormatVersion) + ")");
  int bag = 1;
  if (version == std::to_string(kBagFormatVersion)) {
    const std::string& b = meta("bag");
    // At most two digits, so that stoi neither throws nor overflows.
    const bool digits =
        !b.empty() && b.size() <= 2 &&
        std::all_of(b.begin(), b.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
    bag = digits ? std::stoi(b) : 0;
    if (bag < 2 || bag > kMaxBag)
      throw bad("bag '" + b + "' is not a count of networks from 2 to " + std::to_string(kMaxBag));
  }
  GcnShape s;
  try {
    const auto j = nlohmann::json::parse(meta("shape"));
    s.node_features = j.at("node_features").get<int>();
    s.conv = j.at("conv").get<int>();
    s.hidden = j.at("hidden").get<int>();
    s.globals = j.at("globals").get<int>();
    s.classes = j.at("classes").get<int>();
    // Files written before the choice existed aggregate by the mean.
    const std::string agg = j.value("aggregation", std::string("mean"));
    if (agg != "mean" && agg != "sum")
      throw bad("shape: aggregation '" + agg + "' is not mean or sum");
    s.sum_aggregation = agg == "sum";
    // Files written before the choice existed have no bins.
    s.global_bins = j.value("global_bins", 0);
    if (s.global_bins < 0 || s.global_bins > kMaxGlobalBins)
      throw bad("shape: global_bins " + std::to_string(s.global_bins) + " is not from 0 to " +
                std::to_string(kMaxGlobalBins));
    if (s.globals != features::kPaperGlobals && s.globals != features::kAllGlobals)
      throw bad("shape: " + std::to_string(s.globals) + " globals (this build reads " +
                std::to_string(features::kPaperGlobals) + " or " +
                std::to_string(features::kAllGlobals) + ")");
    if (nlohmann::json::parse(meta("global_features")) != nlohmann::json(global_names(s.globals)))
      throw bad("global_features differ from this build's");
    if (nlohmann::json::parse(meta("classes")) != nlohmann::json(slice_format_classes()))
      throw bad("classes differ from this build's");
    if (info) {
      info->arch = meta("arch");
      info->date = meta("date");
      info->labels = meta("labels");
      info->sparsity_threshold = nlohmann::json::parse(meta("sparsity_threshold")).get<double>();
      info->notes = meta("notes");
      info->test_slices.clear();
      if (const auto t = f.metadata.find("test_slices"); t != f.metadata.end())
        info->test_slices = nlohmann::json::parse(t->second).get<std::vector<std::string>>();
    }
  } catch (const nlohmann::json::exception& e) {
    throw bad(std::string("malformed metadata: ") + e.what());
  }
  if (!valid_node_features(s.node_features) || s.conv < 1 || s.conv > 4096 || s.hidden < 1 ||
      s.hidden > 4096 || s.classes != static_cast<int>(slice_format_classes().size()))
    throw bad("shape out of range");
  const Layout l(s);
  const auto arrays = tensors(s, l.w1s, l.w1n, l.b1, l.w2s, l.w2n, l.b2, l.m1, l.c1, l.m2, l.c2);
  // Network k of the bag from its arrays.
  const auto read_net = [&](int k) {
    SliceGcn g(s, 0);
    const std::string pre = bag_prefix(k);
    for (const auto& t : arrays) {
      const std::string name = pre + t.name;
      const auto* a = f.find(name);
      if (!a) throw bad("array " + name + " is missing");
      if (a->dtype != "F64" ||
          a->shape != std::vector<std::int64_t>{static_cast<std::int64_t>(t.rows),
                                                static_cast<std::int64_t>(t.cols)})
        throw bad("array " + name + " has the wrong dtype or shape");
      const auto v = io::get_array<double>(f, name);
      for (double x : v)
        if (!std::isfinite(x)) throw bad("array " + name + " holds a non-finite value");
      std::copy(v.begin(), v.end(), g.w_.begin() + static_cast<std::ptrdiff_t>(t.offset));
    }
    for (const char* base : {"globals.mean", "globals.std"}) {
      const std::string name = pre + base;
      const auto* a = f.find(name);
      if (!a) throw bad("array " + name + " is missing");
      if (a->dtype != "F64" || a->shape != std::vector<std::int64_t>{1, s.globals})
        throw bad("array " + name + " has the wrong dtype or shape");
      const auto v = io::get_array<double>(f, name);
      const bool is_std = std::string(base) == "globals.std";
      for (double x : v)
        if (!std::isfinite(x) || (is_std && !(x > 0)))
          throw bad("array " + name +
                    (is_std ? " holds a value that is not a positive number"
                            : " holds a non-finite value"));
      (is_std ? g.gstd_ : g.gmean_) = v;
    }
    if (s.global_bins > 0) {
      const std::string name = pre + "globals.edges";
      const auto* a = f.find(name);
      if (!a) throw bad("array " + name + " is missing");
      if (a->dtype != "F64" || a->shape != std::vector<std::int64_t>{s.globals, s.global_bins + 1})
        throw bad("array " + name + " has the wrong dtype or shape");
      const auto v = io::get_array<double>(f, name);
      for (std::size_t i = 0; i < v.size(); ++i)
        if (!std::isfinite(v[i]) || (i % (s.global_bins + 1) != 0 && v[i] < v[i - 1]))
          throw bad("array " + name + " holds a non-finite value or edges out of order");
      g.gedges_ = v;
    }
    return g;
  };
  SliceGcn g = read_net(0);
  for (int k = 1; k < bag; ++k) g.members_.push_back(read_net(k));
  return g;
}

}  // namespace sparsetune::models
