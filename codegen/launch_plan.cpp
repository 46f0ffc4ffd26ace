#include "codegen/launch_plan.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "core/error.hpp"
#include "core/reference.hpp"
#include "core/version.hpp"
#include "graph/half.hpp"
#include "graph/interpreter.hpp"

namespace sparsetune::codegen {

namespace {

double round_value(double v, const std::string& dtype) {
  if (dtype == "f64") return v;
  if (dtype == "f32") return static_cast<float>(v);
  return graph::half_to_float(graph::float_to_half(static_cast<float>(v)));
}

std::vector<double> random_x(std::int64_t n, std::uint64_t seed, const std::string& dtype) {
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + 1);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> x(n);
  for (auto& v : x) v = round_value(u(rng), dtype);
  if (n > 0 && std::all_of(x.begin(), x.end(), [](double v) { return v == 0.0; })) x[0] = 0.5;
  return x;
}

io::NamedArray pack_x(const std::vector<double>& x, const std::string& dtype) {
  io::NamedArray a;
  a.name = "x";
  a.dtype = dtype;
  a.shape = {static_cast<std::int64_t>(x.size())};
  a.bytes.resize(x.size() * io::dtype_size(dtype));
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (dtype == "F64") {
      std::memcpy(a.bytes.data() + 8 * i, &x[i], 8);
    } else if (dtype == "F32") {
      const float f = static_cast<float>(x[i]);
      std::memcpy(a.bytes.data() + 4 * i, &f, 4);
    } else {
      const std::uint16_t h = graph::float_to_half(static_cast<float>(x[i]));
      std::memcpy(a.bytes.data() + 2 * i, &h, 2);
    }
  }
  return a;
}

}  // namespace

SpmvPlan make_launch_plan(const graph::Format& f, const KernelSource& k, const std::string& name,
                          const Scaling& scaling, std::int64_t n) {
  const bool spmm = f.op == "spmm";
  if (spmm ? n < 1 : n != 1)
    throw Error("launch plan: n = " + std::to_string(n) + " for an " + f.op + " format");
  SpmvPlan p;
  p.op = spmm ? "spmm" : "spmv";
  p.n = n;
  p.layout = f.layout;
  // B and C packed: row-major ldb = ldc = n, column-major ldb = cols, ldc = rows (at least 1).
  const std::int64_t ldb = f.col_major() ? std::max<std::int64_t>(f.cols, 1) : n;
  const std::int64_t ldc = f.col_major() ? std::max<std::int64_t>(f.rows, 1) : n;
  p.scaling = scaling;
  p.name = name;
  p.rows = f.rows;
  p.cols = f.cols;
  p.nnz = f.nnz;
  p.check_dtype = f.dtype;
  p.x_dtype = graph::value_dtype(f.dtype);
  p.y_dtype = f.dtype == "f64" ? "F64" : "F32";
  p.value_bytes = static_cast<int>(io::dtype_size(p.x_dtype));
  // Store-only kernels, and a storing part that runs first, write every row of y themselves
  // (reading it only when beta != 0); otherwise the adding kernels need y zeroed, or scaled by
  // beta by the first launch.
  const bool adding = f.scales_output_first();
  p.zero_output = adding && scaling.beta == 0.0;
  p.init_output = scaling.beta != 0.0;
  const std::string scalar = p.y_dtype == "F64" ? "f64" : "f32";
  if (adding && scaling.beta != 0.0) {
    if (k.scale_kernel.empty()) throw Error("the kernels of an adding format lack the y scaling");
    PlanLaunch l;
    l.kernel = k.scale_kernel;
    l.block = kScaleThreads;
    l.grid = std::clamp<std::int64_t>((f.rows * n + kScaleThreads - 1) / kScaleThreads, 1, 65536);
    l.args = {PlanArg::buf("y"), {"", "i64", 0.0, f.rows}, {"", scalar, scaling.beta, 0}};
    if (spmm)  // (C, rows, n, ldc, beta)
      l.args = {PlanArg::buf("y"),
                {"", "i64", 0.0, f.rows},
                {"", "i64", 0.0, n},
                {"", "i64", 0.0, ldc},
                {"", scalar, scaling.beta, 0}};
    p.launches.push_back(std::move(l));
  }
  // The stored arrays exactly as the format binary holds them ("p<part>.<array>").
  p.arrays = graph::to_safetensors(f, kVersion);
  p.arrays.metadata.clear();
  std::size_t next = 0;
  const Fusion u = plan_fusion(f);
  const std::size_t first_part = p.launches.size();
  for (const std::size_t i : f.launch_order()) {
    const auto& part = f.parts[i];
    if (part.n_bmtb == 0) continue;  // no kernel was generated for it
    if (!u.fused && (next >= k.kernels.size() || k.kernels[next] != part.kernel))
      throw Error("the kernels do not match the format: no kernel " + part.kernel);
    ++next;
    if (part.grid < 1 || part.grid > std::numeric_limits<std::int32_t>::max())
      throw Error("part " + std::to_string(i) + " has a grid of " + std::to_string(part.grid) +
                  " blocks");
    PlanLaunch l;
    l.kernel = part.kernel;
    l.grid = part.grid;
    l.block = part.threads;
    l.args = {PlanArg::buf("x"),
              PlanArg::buf("y"),
              {"", scalar, scaling.alpha, 0},
              {"", scalar, scaling.beta, 0}};
    if (spmm) {  // (B, ldb, C, ldc, n, alpha, beta), over the column tiles
      l.grid_y = (n + part.col_span() - 1) / part.col_span();
      if (l.grid_y > 65535)
        throw Error("part " + std::to_string(i) + ": " + std::to_string(l.grid_y) +
                    " column tiles exceed a grid's 65535");
      l.args = {PlanArg::buf("x"),
                {"", "i64", 0.0, ldb},
                PlanArg::buf("y"),
                {"", "i64", 0.0, ldc},
                {"", "i64", 0.0, n},
                {"", scalar, scaling.alpha, 0},
                {"", scalar, scaling.beta, 0}};
    }
    for (const auto& [array, a] : part.arrays)
      if (a.stored()) l.args.push_back(PlanArg::buf("p" + std::to_string(i) + "." + array));
    p.launches.push_back(std::move(l));
  }
  if (u.fused) {
    // One launch: the operation's arguments (SpMM 7, SpMV 4), then every part's arrays in turn,
    // over the parts' grids.
    if (k.kernels != std::vector<std::string>{kFusedKernel})
      throw Error("the kernels do not match the format: no fused kernel");
    PlanLaunch l = p.launches.at(first_part);
    l.kernel = kFusedKernel;
    l.grid = u.grid;
    if (spmm) {
      l.grid_y = (n + u.narrowest_tile - 1) / u.narrowest_tile;
      if (l.grid_y > 65535)
        throw Error(std::to_string(l.grid_y) + " column tiles exceed a grid's 65535");
    }
    const std::size_t op_args = spmm ? 7 : 4;
    l.args.resize(op_args);
    for (std::size_t j = first_part; j < p.launches.size(); ++j)
      l.args.insert(l.args.end(), p.launches[j].args.begin() + op_args, p.launches[j].args.end());
    p.launches.resize(first_part);
    p.launches.push_back(std::move(l));
    next = 1;
  }
  if (next != k.kernels.size()) throw Error("the kernels do not match the format's parts");
  return p;
}

std::vector<double> plan_x(std::int64_t cols, const std::string& dtype, std::uint64_t seed) {
  return random_x(cols, seed, dtype);
}

PlanInputs spmv_plan_inputs(const std::string& dtype, const Csr64& a, std::vector<double> x) {
  if (static_cast<std::int64_t>(x.size()) != a.cols)
    throw Error("x has " + std::to_string(x.size()) + " entries, the matrix " +
                std::to_string(a.cols) + " columns");
  PlanInputs in;
  for (auto& v : x) v = round_value(v, dtype);
  in.x = std::move(x);
  Csr64 r = a;
  for (auto& v : r.val) v = round_value(v, dtype);
  in.y_ref = spmv_reference(r, in.x);
  for (std::int64_t i = 0; i < a.rows; ++i) in.max_len = std::max(in.max_len, a.row_length(i));
  return in;
}

PlanInputs spmm_plan_inputs(const std::string& dtype, const Csr64& a, std::int64_t n,
                            std::uint64_t seed, bool col_major) {
  if (n < 1) throw Error("spmm: n must be at least 1");
  PlanInputs in;
  in.x = random_x(a.cols * n, seed, dtype);
  Csr64 r = a;
  for (auto& v : r.val) v = round_value(v, dtype);
  if (col_major) {  // the same values read column-major: the reference of the transposes
    const auto t = [n](const std::vector<double>& m, std::int64_t lines, bool to_col) {
      std::vector<double> o(m.size());
      for (std::int64_t i = 0; i < lines; ++i)
        for (std::int64_t j = 0; j < n; ++j)
          (to_col ? o[i + j * lines] : o[i * n + j]) = to_col ? m[i * n + j] : m[i + j * lines];
      return o;
    };
    in.y_ref = t(spmm_reference(r, t(in.x, a.cols, false), n), a.rows, true);
  } else {
    in.y_ref = spmm_reference(r, in.x, n);
  }
  for (std::int64_t i = 0; i < a.rows; ++i) in.max_len = std::max(in.max_len, a.row_length(i));
  return in;
}

PlanInputs spmm_plan_inputs(const graph::Format& f, std::int64_t n, std::uint64_t seed) {
  if (n < 1) throw Error("spmm: n must be at least 1");
  PlanInputs in = spmv_plan_inputs(f, std::vector<double>(f.cols, 1.0));  // for max_len
  in.x = random_x(f.cols * n, seed, f.dtype);
  in.y_ref = graph::interpret_spmm(f, in.x, n);
  return in;
}

PlanInputs spmv_plan_inputs(const graph::Format& f, std::vector<double> x) {
  if (static_cast<std::int64_t>(x.size()) != f.cols)
    throw Error("x has " + std::to_string(x.size()) + " entries, the matrix " +
                std::to_string(f.cols) + " columns");
  PlanInputs in;
  for (auto& v : x) v = round_value(v, f.dtype);
  in.x = std::move(x);
  in.y_ref = graph::interpret(f, in.x);
  // Row lengths: the same walk with every non-zero stored value 1 and x all ones.
  graph::Format ones = f;
  ones.store_only = false;  // counts add up whatever the format claims
  ones.storing_part = -1;
  for (auto& part : ones.parts)
    if (auto it = part.arrays.find("nz_val"); it != part.arrays.end())
      for (auto& v : it->second.reals) v = v != 0.0 ? 1.0 : 0.0;
  const auto len = graph::interpret(ones, std::vector<double>(f.cols, 1.0));
  for (double l : len) in.max_len = std::max(in.max_len, static_cast<std::int64_t>(l + 0.5));
  return in;
}

void apply_scaling(PlanInputs& in, const std::string& dtype, const Scaling& s, std::uint64_t seed) {
  if (s.alpha == 1.0 && s.beta == 0.0) return;
  const std::string y_type = dtype == "f64" ? "f64" : "f32";
  if (s.beta != 0.0) {
    in.y_init = random_x(static_cast<std::int64_t>(in.y_ref.size()), seed, y_type);
    in.has_y_init = true;
  }
  for (std::size_t i = 0; i < in.y_ref.size(); ++i)
    in.y_ref[i] = s.alpha * in.y_ref[i] + (s.beta != 0.0 ? s.beta * in.y_init[i] : 0.0);
}

io::SafetensorsFile plan_inputs_file(const std::string& dtype, const PlanInputs& in) {
  io::SafetensorsFile s;
  s.arrays.push_back(pack_x(in.x, graph::value_dtype(dtype)));
  io::add_array(s, "y_ref", in.y_ref);
  if (in.has_y_init) {
    auto y = pack_x(in.y_init, dtype == "f64" ? "F64" : "F32");
    y.name = "y_init";
    s.arrays.push_back(std::move(y));
  }
  return s;
}

io::SafetensorsFile plan_file(const SpmvPlan& p, const std::vector<char>& cubin,
                              std::int64_t max_len, const PlanInputs* inputs) {
  io::SafetensorsFile s = p.arrays;
  if (inputs) {
    if (static_cast<std::int64_t>(inputs->x.size()) != p.cols * p.n ||
        static_cast<std::int64_t>(inputs->y_ref.size()) != p.rows * p.n)
      throw Error("plan inputs do not match the matrix's shape");
    if (p.init_output != inputs->has_y_init)
      throw Error("plan inputs: beta is " + std::to_string(p.scaling.beta) + " but y_init is " +
                  (inputs->has_y_init ? "given" : "missing"));
    for (auto& a : plan_inputs_file(p.check_dtype, *inputs).arrays)
      s.arrays.push_back(std::move(a));
  }
  if (!cubin.empty()) {
    io::NamedArray c;
    c.name = "__cubin__";
    c.dtype = "U8";
    c.shape = {static_cast<std::int64_t>(cubin.size())};
    c.bytes.assign(cubin.begin(), cubin.end());
    s.arrays.push_back(std::move(c));
  }
  nlohmann::json launches = nlohmann::json::array();
  for (const auto& l : p.launches) {
    nlohmann::json args = nlohmann::json::array();
    for (const auto& a : l.args) {
      if (a.scalar.empty())
        args.push_back({{"buffer", a.buffer}});
      else if (a.scalar == "i64")
        args.push_back({{"i64", a.i}});
      else
        args.push_back({{a.scalar, a.f}});
    }
    launches.push_back({{"kernel", l.kernel},
                        {"grid", {l.grid, l.grid_y, 1}},
                        {"block", {l.block, 1, 1}},
                        {"shared_bytes", l.shared_bytes},
                        {"args", args}});
  }
  const nlohmann::json plan = {{"name", p.name},
                               {"launches", launches},
                               {"output",
                                {{"buffer", "y"},
                                 {"dtype", p.y_dtype},
                                 {"length", p.rows * p.n},
                                 {"zero", p.zero_output},
                                 {"init", p.init_output ? "y_init" : ""}}},
                               {"x", "x"},
                               {"y_ref", "y_ref"},
                               {"check", {{"dtype", p.check_dtype}, {"max_len", max_len}}},
                               {"cost",
                                {{"op", p.op},
                                 {"n", p.n},
                                 {"rows", p.rows},
                                 {"cols", p.cols},
                                 {"nnz", p.nnz},
                                 {"index_bytes", 4},
                                 {"value_bytes", p.value_bytes}}}};
  s.metadata["sparsetune-plan"] = plan.dump();
  return s;
}

}  // namespace sparsetune::codegen
