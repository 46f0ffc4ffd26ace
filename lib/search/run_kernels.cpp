#include "search/run_kernels.hpp"

#include <stdlib.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "codegen/kernel_builder.hpp"
#include "codegen/launch_plan.hpp"
#include "core/error.hpp"
#include "core/fingerprint.hpp"
#include "core/operand_checks.hpp"
#include "graph/format.hpp"
#include "io/file_bytes.hpp"
#include "io/matrix_file.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/nvrtc.hpp"

namespace sparsetune::search {

namespace fs = std::filesystem;

namespace {

class TempDir {
 public:
  TempDir() {
    std::string t = (fs::temp_directory_path() / "sparsetune-run-XXXXXX").string();
    if (!::mkdtemp(t.data())) throw Error("cannot create a temporary folder in " + t);
    path_ = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw Error("cannot open " + p.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::vector<double> read_vector_file(const std::string& path) {
  if (path.size() > 4 && path.compare(path.size() - 4, 4, ".f64") == 0) {
    const std::string raw = read_text(path);
    if (raw.size() % 8) throw Error(path + ": not a whole number of little-endian doubles");
    std::vector<double> v(raw.size() / 8);
    if (!v.empty()) std::memcpy(v.data(), raw.data(), raw.size());
    for (double d : v)
      if (!std::isfinite(d)) throw Error(path + ": holds a value that is not finite");
    return v;
  }
  std::ifstream in(path);
  if (!in) throw Error("cannot open " + path);
  std::vector<double> v;
  std::string line;
  std::int64_t n = 0;
  bool array_header = false, size_seen = false;
  while (std::getline(in, line)) {
    ++n;
    if (n == 1 && line.rfind("%%MatrixMarket", 0) == 0) {
      if (line.find("array") == std::string::npos)
        throw InputError(path, n, "x must be a Matrix Market array (dense), not coordinates");
      array_header = true;
      continue;
    }
    if (line.empty() || line[0] == '%') continue;
    std::istringstream s(line);
    if (array_header && !size_seen) {
      std::int64_t r = 0, c = 0;
      if (!(s >> r >> c) || r < 0 || c != 1)
        throw InputError(path, n, "expected the size line \"n 1\" of a column vector");
      size_seen = true;
      continue;
    }
    for (std::string tok; s >> tok;) {
      char* end = nullptr;
      const double d = std::strtod(tok.c_str(), &end);
      if (end == tok.c_str() || *end != '\0' || !std::isfinite(d))
        throw InputError(path, n, "not a finite number: '" + tok + "'");
      v.push_back(d);
    }
  }
  return v;
}

std::int64_t tuned_n(const std::filesystem::path& dir) {
  constexpr std::int64_t kDefault = 16;
  std::ifstream in(dir / "report.json");
  if (!in) return kDefault;
  const auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("n") || !j["n"].is_number_integer())
    return kDefault;
  const auto n = j["n"].get<std::int64_t>();
  return n >= 1 && n <= kMaxRunN ? n : kDefault;
}

RunResult run_emitted(const std::string& dir, const RunOptions& o) {
  if (o.runs < 1) throw Error("--runs must be at least 1");
  const fs::path d(dir);
  const auto format_path = d / "format.safetensors", source_path = d / "kernel.cu";
  if (!fs::is_directory(d)) throw Error(dir + ": not a folder");
  if (!fs::exists(format_path)) throw Error(dir + ": no format.safetensors (see emit-kernel)");
  if (!fs::exists(source_path)) throw Error(dir + ": no kernel.cu (see emit-kernel)");
  const graph::Format f = graph::read_format(format_path.string());
  codegen::KernelSource k;
  k.source = read_text(source_path);
  const bool spmm = f.op == "spmm";
  if (spmm && !o.x_file.empty())
    throw Error("--x is SpMV's vector: an SpMM folder runs on a random B of --n columns");
  if (!spmm && o.n > 0)
    throw Error("--n is the columns of B: " + dir + " holds an " + f.op + " format");
  if (!o.layout.empty()) {  // a check: the kernels were generated for one layout
    if (!spmm)
      throw Error("--layout is the layout of SpMM's B and C: " + dir + " holds an " + f.op +
                  " format");
    graph::check_layout(o.layout, f.op);
    if (o.layout != f.layout)
      throw Error(dir + ": its kernels were generated for " + f.layout + "-major B and C, not " +
                  o.layout + "-major (emit or tune again with --layout " + o.layout + ")");
  }
  const auto need = [&](const std::string& kernel, const std::string& hint) {
    if (k.source.find(kernel + "(") == std::string::npos)
      throw Error(source_path.string() + " has no kernel " + kernel + hint);
  };
  if (codegen::plan_fusion(f).fused) {
    need(codegen::kFusedKernel, " (its parts run fused; emit the folder again)");
    k.kernels.push_back(codegen::kFusedKernel);
  } else {
    for (const std::size_t i : f.launch_order())  // in the order they run
      if (f.parts[i].n_bmtb > 0) {
        need(f.parts[i].kernel, " (not generated for this format?)");
        k.kernels.push_back(f.parts[i].kernel);
      }
  }
  if (f.scales_output_first()) {
    const std::string scale = spmm ? codegen::kScaleKernelSpmm : codegen::kScaleKernel;
    need(scale, " (generated by an older sparsetune? emit the folder again)");
    k.scale_kernel = scale;
  }

  RunResult r;
  r.graph = f.graph.is_object() ? f.graph.value("name", std::string()) : std::string();
  r.dtype = f.dtype;
  r.rows = f.rows;
  r.cols = f.cols;
  r.nnz = f.nnz;
  r.op = f.op;
  r.n = spmm ? (o.n > 0 ? o.n : tuned_n(d)) : 1;
  r.layout = f.layout;
  const codegen::Scaling scaling{o.alpha, o.beta};
  // A --n that no grid or no memory here can hold is refused by name, before any input is made.
  const std::string n_text = spmm && o.n > 0 ? "--n " + std::to_string(o.n) + ": " : "";
  check_dense_operands(static_cast<double>(f.rows), static_cast<double>(f.cols),
                       static_cast<double>(r.n), f.dtype, n_text + dir);
  const auto plan = [&] {
    try {
      return codegen::make_launch_plan(f, k, r.graph, scaling, r.n);
    } catch (const Error& e) {
      throw Error(n_text.empty() ? std::string(e.what()) : n_text + e.what());
    }
  }();
  r.launches = static_cast<int>(plan.launches.size());

  // Inputs and the reference (CPU), before any GPU work: SpMV's x (random or a file), SpMM's
  // random B of n columns; the reference from the matrix when given, else the interpreter's.
  std::vector<double> x;
  if (!spmm) {
    x = o.x_file.empty() ? codegen::plan_x(f.cols, f.dtype, o.seed) : read_vector_file(o.x_file);
    if (static_cast<std::int64_t>(x.size()) != f.cols)
      throw Error((o.x_file.empty() ? std::string("x") : o.x_file) + " has " +
                  std::to_string(x.size()) + " values; the matrix has " + std::to_string(f.cols) +
                  " columns");
  }
  std::optional<Csr64> a;
  if (!o.matrix_file.empty()) {
    a = io::read_matrix(o.matrix_file);
    if (fingerprint(*a) != f.fingerprint)
      throw Error(o.matrix_file + " is not the matrix this format was designed for");
  }
  codegen::PlanInputs in;
  if (spmm)
    in = a ? codegen::spmm_plan_inputs(f.dtype, *a, r.n, o.seed, f.col_major())
           : codegen::spmm_plan_inputs(f, r.n, o.seed);
  else
    in = a ? codegen::spmv_plan_inputs(f.dtype, *a, std::move(x))
           : codegen::spmv_plan_inputs(f, std::move(x));
  r.reference = a ? "fp64 " + std::string(spmm ? "SpMM" : "SpMV") + " of " + o.matrix_file
                  : "fp64 walk of the format's arrays (CPU interpreter)";
  codegen::apply_scaling(in, f.dtype, scaling, o.seed + 1);
  r.alpha = o.alpha;
  r.beta = o.beta;

  runtime::Worker w(o.launch);
  const auto dev = w.call({{"job", "device"}, {"bandwidth", true}}, o.timeout_s);
  if (!dev.ok) throw Error(dev.error + ": running kernels needs a GPU");
  r.device = runtime::device_model_from_json(dev.body.at("device"));

  const auto t0 = std::chrono::steady_clock::now();
  const runtime::KernelCache cache;
  runtime::CompileOptions co;
  co.arch = r.device.arch;
  const auto c = runtime::compile({source_path.filename().string(), k.source}, co, &cache);
  r.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  r.cubin_from_cache = c.from_cache;

  TempDir tmp;
  const auto plan_path = tmp.path() / "plan.safetensors";
  io::write_safetensors(plan_path.string(), codegen::plan_file(plan, c.cubin, in.max_len, &in));
  const auto rep =
      w.call({{"job", "plan"}, {"plan", plan_path.string()}, {"runs", o.runs}}, o.timeout_s);
  if (rep.ok) {
    r.result = runtime::baseline_from_json(rep.body.at("result"), r.device.bandwidth_gbs);
  } else {
    r.result.name = r.graph;
    r.result.dtype = f.dtype;
    r.result.status = "failed";
    r.result.note = (rep.worker_lost ? "worker lost: " : "") + rep.error;
  }
  return r;
}

nlohmann::json to_json(const RunResult& r) {
  const auto& b = r.result;
  nlohmann::json j = {{"graph", r.graph},
                      {"dtype", r.dtype},
                      {"op", r.op},
                      {"n", r.n},
                      {"rows", r.rows},
                      {"cols", r.cols},
                      {"nnz", r.nnz},
                      {"launches", r.launches},
                      {"alpha", r.alpha},
                      {"beta", r.beta},
                      {"reference", r.reference},
                      {"compile_ms", r.compile_ms},
                      {"cubin_from_cache", r.cubin_from_cache},
                      {"device",
                       {{"name", r.device.name},
                        {"arch", r.device.arch},
                        {"bandwidth_gbs", r.device.bandwidth_gbs}}},
                      {"status", b.status},
                      {"verified", b.verified},
                      {"error", b.error >= 0 ? nlohmann::json(b.error) : nlohmann::json(nullptr)},
                      {"tolerance", b.tolerance},
                      {"time_ms",
                       {{"median", b.time_ms.median},
                        {"min", b.time_ms.min},
                        {"max", b.time_ms.max},
                        {"q1", b.time_ms.q1},
                        {"q3", b.time_ms.q3},
                        {"runs", b.time_ms.count}}},
                      {"gflops", b.gflops},
                      {"gbs", b.gbs},
                      {"bandwidth_fraction", b.bandwidth_fraction},
                      {"warm", runtime::to_json(b.warm)},
                      {"note", b.note}};
  if (r.op == "spmm") j["layout"] = r.layout;
  return j;
}

}  // namespace sparsetune::search
