#include "gen/generate.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include "core/error.hpp"
#include "gen/geometric.hpp"
#include "gen/kronecker.hpp"
#include "gen/random_graphs.hpp"
#include "gen/random_tensor.hpp"
#include "gen/scenarios.hpp"
#include "gen/stencil.hpp"
#include "gen/structured.hpp"

namespace sparsetune::gen {

namespace {

constexpr std::int64_t kMaxDim = (std::int64_t{1} << 31) - 1;

// Shortest text that reads back as the same double.
std::string format_real(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out.append(sep);
    out.append(parts[i]);
  }
  return out;
}

// A whole number, plain or in scientific notation as sizes are often written (1e6, 2.5e5);
// nothing for any other text. `huge` is set for a whole number past int64's range (1e30).
std::optional<std::int64_t> whole_number(const std::string& s, bool* huge) {
  *huge = false;
  std::int64_t v = 0;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (s.empty()) return std::nullopt;
  if (const auto [end, ec] = std::from_chars(b, e, v); ec == std::errc() && end == e) return v;
  double d = 0;
  const auto [dend, dec] = std::from_chars(b, e, d);
  const bool whole = (dec == std::errc() || dec == std::errc::result_out_of_range) && dend == e &&
                     std::isfinite(d) && d == std::floor(d);
  if (!whole) {
    // A plain integer past int64 fails from_chars for both types the same way.
    *huge = s.find_first_not_of("+-0123456789") == std::string::npos && s.size() > 18;
    return std::nullopt;
  }
  if (std::abs(d) >= 9.2e18) {
    *huge = true;
    return std::nullopt;
  }
  return static_cast<std::int64_t>(d);
}

// Typed, range-checked access to one kind's string parameters. Every message names the
// parameter; `resolved` collects the value actually used for each.
class Params {
 public:
  Params(const KindInfo& kind, const std::map<std::string, std::string>& given,
         std::map<std::string, std::string>& resolved)
      : kind_(kind), resolved_(resolved) {
    for (const auto& [raw, value] : given) {
      std::string name = raw;
      std::replace(name.begin(), name.end(), '-', '_');
      const bool known = std::any_of(kind.params.begin(), kind.params.end(),
                                     [&](const ParamInfo& p) { return p.name == name; });
      if (!known) {
        std::vector<std::string> names;
        for (const auto& p : kind.params) names.push_back(p.name);
        throw Error(prefix() + "unknown parameter '" + raw + "' (known: " + join(names, ", ") +
                    ")");
      }
      if (given_.count(name)) throw Error(prefix() + "parameter '" + name + "' given twice");
      given_[name] = value;
    }
  }

  bool has(const std::string& name) const { return given_.count(name) > 0; }

  std::int64_t integer(const std::string& name, std::int64_t def, std::int64_t lo,
                       std::int64_t hi) {
    std::int64_t v = def;
    if (has(name)) {
      const std::string& s = given_.at(name);
      bool huge = false;
      const auto w = whole_number(s, &huge);
      if (huge || (w && (*w < lo || *w > hi)))
        throw Error(prefix() + "parameter '" + name + "' must be in [" + std::to_string(lo) + ", " +
                    std::to_string(hi) + "], got " + s);
      if (!w)
        throw Error(prefix() + "parameter '" + name + "' must be an integer, got '" + s + "'");
      v = *w;
    }
    resolved_[name] = std::to_string(v);
    return v;
  }

  // A real in [lo, hi], or (lo, hi] when lo_open.
  double real(const std::string& name, double def, double lo, double hi, bool lo_open = false) {
    double v = def;
    if (has(name)) {
      const std::string& s = given_.at(name);
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec != std::errc() || end != s.data() + s.size() || s.empty() || !std::isfinite(v))
        throw Error(prefix() + "parameter '" + name + "' must be a number, got '" + s + "'");
      if (v < lo || v > hi || (lo_open && v == lo))
        throw Error(prefix() + "parameter '" + name + "' must be in " + (lo_open ? "(" : "[") +
                    format_real(lo) + ", " + format_real(hi) + "], got " + s);
    }
    resolved_[name] = format_real(v);
    return v;
  }

  bool flag(const std::string& name, bool def) {
    bool v = def;
    if (has(name)) {
      std::string s = given_.at(name);
      std::transform(s.begin(), s.end(), s.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      if (s == "true" || s == "1" || s == "yes" || s == "on") {
        v = true;
      } else if (s == "false" || s == "0" || s == "no" || s == "off") {
        v = false;
      } else {
        throw Error(prefix() + "parameter '" + name + "' must be true or false, got '" +
                    given_.at(name) + "'");
      }
    }
    resolved_[name] = v ? "true" : "false";
    return v;
  }

  // Comma-separated integers, each in [lo, hi], between min_count and max_count of them.
  std::vector<std::int64_t> list(const std::string& name, const std::string& def, std::int64_t lo,
                                 std::int64_t hi, std::size_t min_count, std::size_t max_count) {
    const std::string s = has(name) ? given_.at(name) : def;
    std::vector<std::int64_t> out;
    std::size_t pos = 0;
    while (true) {
      const std::size_t comma = std::min(s.find(',', pos), s.size());
      const std::string item = s.substr(pos, comma - pos);
      bool huge = false;
      const auto v = whole_number(item, &huge);
      if (!v && !huge)
        throw Error(prefix() + "parameter '" + name +
                    "' must be a comma-separated list of integers, got '" + s + "'");
      if (huge || *v < lo || *v > hi)
        throw Error(prefix() + "parameter '" + name + "' entries must be in [" +
                    std::to_string(lo) + ", " + std::to_string(hi) + "], got " + item);
      out.push_back(*v);
      if (comma == s.size()) break;
      pos = comma + 1;
    }
    if (out.size() < min_count || out.size() > max_count)
      throw Error(prefix() + "parameter '" + name + "' takes " + std::to_string(min_count) +
                  " to " + std::to_string(max_count) + " entries, got " +
                  std::to_string(out.size()));
    std::vector<std::string> text;
    for (auto v : out) text.push_back(std::to_string(v));
    resolved_[name] = join(text, ",");
    return out;
  }

  // A required text parameter.
  std::string text(const std::string& name) {
    if (!has(name)) throw Error(prefix() + "parameter '" + name + "' is required");
    resolved_[name] = given_.at(name);
    return given_.at(name);
  }

  // Refuses a combination of parameters that contradict each other.
  void exclusive(const std::string& a, const std::string& b) const {
    if (has(a) && has(b))
      throw Error(prefix() + "parameters '" + a + "' and '" + b + "' exclude each other");
  }

  void set(const std::string& name, const std::string& value) { resolved_[name] = value; }

 private:
  std::string prefix() const { return "gen " + kind_.name + ": "; }

  const KindInfo& kind_;
  std::map<std::string, std::string>& resolved_;
  std::map<std::string, std::string> given_;
};

using Builder = std::function<void(Params&, std::uint64_t, GeneratedMatrix&)>;

struct Kind {
  KindInfo info;
  Builder build;
};

const std::vector<Kind>& kinds() {
  static const std::vector<Kind> all = {
      {{"stencil2d",
        "5- or 9-point stencil on an nx x ny grid",
        false,
        {{"nx", "64", "grid points along x"},
         {"ny", "", "grid points along y (default nx)"},
         {"points", "5", "stencil points: 5 or 9"}}},
       [](Params& p, std::uint64_t, GeneratedMatrix& g) {
         const auto nx = p.integer("nx", 64, 1, kMaxDim);
         const auto ny = p.integer("ny", nx, 1, kMaxDim);
         const auto points = p.integer("points", 5, 5, 9);
         if (points != 5 && points != 9)
           throw Error("gen stencil2d: parameter 'points' must be 5 or 9, got " +
                       std::to_string(points));
         g.matrix = stencil_2d(nx, ny, static_cast<int>(points));
       }},
      {{"stencil3d",
        "7- or 27-point stencil on an nx x ny x nz grid",
        false,
        {{"n", "", "cube side: sets nx = ny = nz"},
         {"nx", "32", "grid points along x"},
         {"ny", "", "grid points along y (default nx)"},
         {"nz", "", "grid points along z (default nx)"},
         {"points", "7", "stencil points: 7 or 27"}}},
       [](Params& p, std::uint64_t, GeneratedMatrix& g) {
         for (const char* axis : {"nx", "ny", "nz"}) p.exclusive("n", axis);
         const auto side = p.integer("n", 32, 1, kMaxDim);
         const auto nx = p.integer("nx", side, 1, kMaxDim);
         const auto ny = p.integer("ny", nx, 1, kMaxDim);
         const auto nz = p.integer("nz", nx, 1, kMaxDim);
         const auto points = p.integer("points", 7, 7, 27);
         if (points != 7 && points != 27)
           throw Error("gen stencil3d: parameter 'points' must be 7 or 27, got " +
                       std::to_string(points));
         g.matrix = stencil_3d(nx, ny, nz, static_cast<int>(points));
       }},
      {{"kron",
        "Graph500 Kronecker (R-MAT) graph with 2^scale vertices",
        false,
        {{"scale", "16", "n = 2^scale vertices (1..30)"},
         {"edge_factor", "16", "edges drawn = edge_factor * n"},
         {"a", "0.57", "probability of the top-left quadrant"},
         {"b", "0.19", "probability of the top-right quadrant"},
         {"c", "0.19", "probability of the bottom-left quadrant (d = 1 - a - b - c)"},
         {"permute", "true", "relabel vertices by a random permutation"},
         {"self_loops", "true", "keep edges from a vertex to itself"},
         {"symmetric", "false", "store each edge both ways"}}},
       [](Params& p, std::uint64_t seed, GeneratedMatrix& g) {
         KroneckerParams k;
         k.scale = static_cast<int>(p.integer("scale", 16, 1, 30));
         k.edge_factor = p.integer("edge_factor", 16, 1, std::int64_t{1} << 32);
         k.a = p.real("a", 0.57, 0, 1);
         k.b = p.real("b", 0.19, 0, 1);
         k.c = p.real("c", 0.19, 0, 1);
         if (k.a + k.b + k.c > 1.0 + 1e-12)
           throw Error("gen kron: parameters 'a' + 'b' + 'c' must be at most 1, got " +
                       format_real(k.a + k.b + k.c));
         p.set("d", format_real(std::max(0.0, 1.0 - k.a - k.b - k.c)));
         k.permute = p.flag("permute", true);
         k.self_loops = p.flag("self_loops", true);
         k.symmetric = p.flag("symmetric", false);
         g.matrix = kronecker(k, seed);
       }},
      {{"geometric",
        "random geometric graph: n points in the unit square, edges shorter than a radius",
        false,
        {{"n", "10000", "points"},
         {"radius", "", "connection radius (excludes degree)"},
         {"degree", "", "expected degree instead of a radius (default 8)"}}},
       [](Params& p, std::uint64_t seed, GeneratedMatrix& g) {
         p.exclusive("radius", "degree");
         const auto n = p.integer("n", 10000, 1, kMaxDim);
         double r = 0.0;
         if (p.has("radius")) {
           r = p.real("radius", 0.0, 0.0, 1.5, true);
         } else {
           const double d = p.real("degree", 8.0, 0.0, static_cast<double>(n), true);
           r = std::min(1.5, geometric_radius_for_degree(n, d));
           p.set("radius", format_real(r));
         }
         g.matrix = random_geometric(n, r, seed);
       }},
      {{"erdos",
        "Erdos-Renyi G(n, p): every position present with probability p",
        false,
        {{"n", "10000", "rows and columns"},
         {"p", "", "probability of each position (excludes degree)"},
         {"degree", "", "expected entries per row instead of p (default 8)"},
         {"symmetric", "false", "undirected: pairs i < j mirrored, no diagonal"}}},
       [](Params& p, std::uint64_t seed, GeneratedMatrix& g) {
         p.exclusive("p", "degree");
         ErdosRenyiParams e;
         e.n = p.integer("n", 10000, 1, kMaxDim);
         e.symmetric = p.flag("symmetric", false);
         const double slots = static_cast<double>(e.symmetric ? e.n - 1 : e.n);
         if (p.has("p")) {
           e.p = p.real("p", 0.0, 0.0, 1.0);
         } else {
           const double d = p.real("degree", std::min(8.0, slots), 0.0, slots);
           e.p = slots > 0 ? d / slots : 0.0;
           p.set("p", format_real(e.p));
         }
         g.matrix = erdos_renyi(e, seed);
       }},
      {{"scenario",
        "one matrix of the edge-case scenario list the tests run every format through",
        false,
        {{"name", "",
          "the scenario: 0x0, 0xN, Nx0, all-zero, 1x1, empty-rows, empty-cols, "
          "dense-row, dense, explicit-zeros, duplicates, poisson, tall, wide"},
         {"dense_row", "100000", "length of the dense row of dense-row"}}},
       [](Params& p, std::uint64_t, GeneratedMatrix& g) {
         const auto dense_row = p.integer("dense_row", 100000, 1, (std::int64_t{1} << 31) - 1);
         const std::string name = p.text("name");
         if (p.has("dense_row") && name != "dense-row")
           throw Error(
               "gen scenario: --dense-row is the length of the dense-row scenario's row, "
               "not of " +
               (name.empty() ? std::string("no --name") : "'" + name + "'"));
         g.matrix = scenario(name, dense_row).a;
       }},
      {{"banded",
        "band matrix, dense or partly filled",
        false,
        {{"n", "10000", "rows and columns"},
         {"bandwidth", "4", "diagonals below and above the main one"},
         {"lower", "", "diagonals below (default bandwidth)"},
         {"upper", "", "diagonals above (default bandwidth)"},
         {"fill", "1", "probability of each off-diagonal band position"}}},
       [](Params& p, std::uint64_t seed, GeneratedMatrix& g) {
         BandedParams b;
         b.n = p.integer("n", 10000, 1, kMaxDim);
         const auto bw = p.integer("bandwidth", 4, 0, kMaxDim);
         b.lower = p.integer("lower", bw, 0, kMaxDim);
         b.upper = p.integer("upper", bw, 0, kMaxDim);
         b.fill = p.real("fill", 1.0, 0.0, 1.0);
         g.matrix = banded(b, seed);
       }},
      {{"powerlaw",
        "rows with power-law lengths, columns uniform at random",
        false,
        {{"n", "10000", "rows"},
         {"cols", "", "columns (default n)"},
         {"exponent", "2.5", "power-law exponent of the row-length distribution"},
         {"min", "1", "shortest row (independent lengths)"},
         {"max", "", "longest row (independent lengths; default cols)"},
         {"degree", "", "mean row length instead of min/max (Chung-Lu weights)"}}},
       [](Params& p, std::uint64_t seed, GeneratedMatrix& g) {
         p.exclusive("degree", "min");
         p.exclusive("degree", "max");
         PowerLawParams w;
         w.n = p.integer("n", 10000, 1, kMaxDim);
         w.cols = p.integer("cols", w.n, 1, kMaxDim);
         if (p.has("degree")) {
           w.exponent = p.real("exponent", 2.5, 1.0, 100.0, true);
           w.degree = p.real("degree", 0.0, 0.0, static_cast<double>(w.cols), true);
         } else {
           w.exponent = p.real("exponent", 2.5, 0.0, 100.0);
           w.min_length = p.integer("min", 1, 1, w.cols);
           w.max_length = p.integer("max", w.cols, w.min_length, w.cols);
         }
         g.matrix = power_law(w, seed);
       }},
      {{"blockdiag",
        "dense blocks on the diagonal, optional random entries outside them",
        false,
        {{"blocks", "", "number of blocks (default 64 unless n is given)"},
         {"n", "", "rows to cover instead of a block count (last block cut)"},
         {"block_size", "16", "block size, or a comma-separated list used in turn"},
         {"noise", "0", "probability of each position outside the blocks"},
         {"shuffle_columns", "0",
          "1: permute the columns at random (blocks stay dense per row chunk, no index formula)"}}},
       [](Params& p, std::uint64_t seed, GeneratedMatrix& g) {
         p.exclusive("blocks", "n");
         BlockDiagParams b;
         if (p.has("n"))
           b.n = p.integer("n", 0, 1, kMaxDim);
         else
           b.blocks = p.integer("blocks", 64, 1, kMaxDim);
         b.block_sizes = p.list("block_size", "16", 1, kMaxDim, 1, 1 << 20);
         b.noise = p.real("noise", 0.0, 0.0, 1.0);
         b.shuffle_columns = p.integer("shuffle_columns", 0, 0, 1) == 1;
         g.matrix = block_diagonal(b, seed);
       }},
      {{"tensor",
        "random sparse tensor with distinct coordinates and skewed mode-0 slices",
        true,
        {{"dims", "100,100,100", "size of each mode, comma-separated (order = count)"},
         {"nnz", "10000", "non-zero entries"},
         {"skew", "0", "Zipf exponent of the mode-0 index (0 = uniform)"}}},
       [](Params& p, std::uint64_t seed, GeneratedMatrix& g) {
         RandomTensorParams t;
         t.dims = p.list("dims", "100,100,100", 1, kMaxDim, 1, 16);
         t.nnz = p.integer("nnz", 10000, 0, std::int64_t{1} << 33);
         t.skew = p.real("skew", 0.0, 0.0, 100.0);
         g.tensor = random_tensor(t, seed);
       }},
  };
  return all;
}

}  // namespace

const std::vector<KindInfo>& generator_kinds() {
  static const std::vector<KindInfo> infos = [] {
    std::vector<KindInfo> v;
    for (const auto& k : kinds()) v.push_back(k.info);
    return v;
  }();
  return infos;
}

GeneratedMatrix generate(const GenSpec& spec) {
  const auto& all = kinds();
  const auto it =
      std::find_if(all.begin(), all.end(), [&](const Kind& k) { return k.info.name == spec.kind; });
  if (it == all.end()) {
    std::vector<std::string> names;
    for (const auto& k : all) names.push_back(k.info.name);
    throw Error("gen: unknown kind '" + spec.kind + "' (known: " + join(names, ", ") + ")");
  }
  GeneratedMatrix g;
  g.kind = spec.kind;
  g.is_tensor = it->info.tensor;
  Params p(it->info, spec.params, g.resolved);
  it->build(p, spec.seed, g);
  g.resolved["seed"] = std::to_string(spec.seed);
  return g;
}

}  // namespace sparsetune::gen
