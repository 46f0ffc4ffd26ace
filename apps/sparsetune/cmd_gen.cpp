// `sparsetune gen KIND [--param value ...] --seed S -o FILE`: one subcommand per generator kind,
// its options taken from the library's parameter table; all checking happens in lib/gen.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "cli.hpp"
#include "core/error.hpp"
#include "gen/generate.hpp"
#include "io/matrix_file.hpp"
#include "io/tensor_file.hpp"

namespace sparsetune::cli {

namespace {

struct GenOptions {
  std::uint64_t seed = 1;
  std::string output;
  std::map<std::string, std::string> values;  // option name -> text, for the options given
};

// Library parameter names use underscores; options read more naturally with dashes.
std::string option_name(const std::string& param) {
  std::string s = param;
  for (auto& c : s)
    if (c == '_') c = '-';
  return s;
}

void run(const gen::KindInfo& kind, const GenOptions& o, const CLI::App& sub,
         const GlobalOptions& g) {
  gen::GenSpec spec{kind.name, {}, o.seed};
  for (const auto& p : kind.params)
    if (sub.count("--" + option_name(p.name)) > 0) spec.params[p.name] = o.values.at(p.name);
  // A name the writer would refuse is refused before a long generation.
  if (kind.tensor) {
    io::check_tensor_output_name(o.output);
    // Tensor files hold orders 3 to 16: fewer modes are refused before generating.
    const auto dims = spec.params.count("dims") ? spec.params.at("dims") : std::string("3 modes");
    if (std::count(dims.begin(), dims.end(), ',') < 2)
      throw Error("gen tensor: --dims " + dims +
                  " gives fewer than 3 modes; a tensor file holds an order of 3 to 16");
  } else {
    io::check_matrix_output_name(o.output);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const gen::GeneratedMatrix m = gen::generate(spec);
  const auto t1 = std::chrono::steady_clock::now();
  if (m.is_tensor)
    io::write_tensor(o.output, m.tensor);
  else
    io::write_matrix(o.output, m.matrix);
  const auto t2 = std::chrono::steady_clock::now();
  const double gen_s = std::chrono::duration<double>(t1 - t0).count();
  const double write_s = std::chrono::duration<double>(t2 - t1).count();

  nlohmann::json j;
  j["kind"] = m.kind;
  j["file"] = o.output;
  j["params"] = m.resolved;
  if (m.is_tensor) {
    j["dims"] = m.tensor.dims;
    j["nnz"] = m.tensor.nnz();
  } else {
    j["rows"] = m.matrix.rows;
    j["cols"] = m.matrix.cols;
    j["nnz"] = m.matrix.nnz();
  }
  j["generate_seconds"] = gen_s;
  j["write_seconds"] = write_s;
  if (g.json) return print_json(j);

  std::string shape;
  if (m.is_tensor) {
    for (auto d : m.tensor.dims) shape += (shape.empty() ? "" : " x ") + std::to_string(d);
  } else {
    shape = std::to_string(m.matrix.rows) + " x " + std::to_string(m.matrix.cols);
  }
  const long long nnz = m.is_tensor ? m.tensor.nnz() : m.matrix.nnz();
  std::printf("%s: %s, nnz %lld, generated in %.3f s, written in %.3f s -> %s\n", m.kind.c_str(),
              shape.c_str(), nnz, gen_s, write_s, o.output.c_str());
}

}  // namespace

void add_gen_command(CLI::App& app, const GlobalOptions& g) {
  auto* cmd = app.add_subcommand(
      "gen", "Generate a synthetic matrix (.mtx) or tensor (.tns, .safetensors)");
  cmd->require_subcommand(1);
  for (const auto& kind : gen::generator_kinds()) {
    auto* sub = cmd->add_subcommand(kind.name, kind.help);
    // Options live as long as the program: CLI11 writes into them during parsing.
    auto opts = std::make_shared<GenOptions>();
    for (const auto& p : kind.params) {
      std::string help = p.help;
      if (!p.default_value.empty()) help += " [default: " + p.default_value + "]";
      sub->add_option("--" + option_name(p.name), opts->values[p.name], help);
    }
    sub->add_option("--seed", opts->seed, "Random seed: equal seeds give identical output")
        ->capture_default_str();
    sub->add_option("-o,--output", opts->output,
                    kind.tensor ? "Output .tns, .tns.gz or .safetensors file"
                                : "Output .mtx, .mtx.gz or .safetensors file")
        ->required();
    const gen::KindInfo* info = &kind;
    sub->callback([info, opts, sub, &g] { run(*info, *opts, *sub, g); });
  }
}

}  // namespace sparsetune::cli
