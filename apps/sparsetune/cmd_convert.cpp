// `sparsetune convert IN OUT`: a matrix between .mtx, .mtx.gz and the .safetensors container.
#include <chrono>
#include <memory>

#include "cli.hpp"
#include "core/error.hpp"
#include "io/matrix_file.hpp"
#include "io/matrix_market.hpp"

namespace sparsetune::cli {

void add_convert_command(CLI::App& app, const GlobalOptions& g) {
  auto* cmd = app.add_subcommand(
      "convert", "Convert a matrix between .mtx, .mtx.gz and the binary .safetensors container");
  // Options outlive this function: CLI11 writes into them while parsing.
  struct Options {
    std::string in, out, layout = "csr";
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("IN", o->in, "Input matrix: .mtx, .mtx.gz or .safetensors (detected by content)")
      ->required();
  // OUT as a second positional, or as -o like every other command that writes a file.
  auto* out_pos = cmd->add_option("OUT", o->out,
                                  "Output file; its extension (.mtx, .mtx.gz, .safetensors) picks "
                                  "the format");
  auto* out_opt = cmd->add_option("-o,--output", o->out, "Output file (instead of OUT)");
  out_pos->excludes(out_opt);
  out_opt->excludes(out_pos);
  cmd->add_option("--layout", o->layout, "Layout inside a .safetensors output")
      ->check(CLI::IsMember({"csr", "coo"}))
      ->capture_default_str();
  cmd->callback([o, &g] {
    if (o->out.empty()) throw Error("convert: no output file (give OUT or -o FILE)");
    using clock = std::chrono::steady_clock;
    io::check_matrix_output_name(o->out);
    const auto t0 = clock::now();
    io::MtxInfo info;
    const Csr64 a = io::read_matrix(o->in, &info);
    const auto t1 = clock::now();
    io::write_matrix(o->out, a, o->layout == "coo" ? io::Layout::coo : io::Layout::csr);
    const auto t2 = clock::now();
    const double read_s = std::chrono::duration<double>(t1 - t0).count();
    const double write_s = std::chrono::duration<double>(t2 - t1).count();
    if (g.json)
      return print_json({{"input", o->in},
                         {"output", o->out},
                         {"rows", a.rows},
                         {"cols", a.cols},
                         {"nnz", a.nnz()},
                         {"stored_entries", info.stored_entries},
                         {"duplicates", info.duplicates},
                         {"read_seconds", read_s},
                         {"write_seconds", write_s},
                         {"seconds", read_s + write_s}});
    std::printf(
        "%s -> %s: %lld x %lld, %lld non-zeros, %lld duplicates summed, read %.3f s, "
        "write %.3f s\n",
        o->in.c_str(), o->out.c_str(), static_cast<long long>(a.rows),
        static_cast<long long>(a.cols), static_cast<long long>(a.nnz()),
        static_cast<long long>(info.duplicates), read_s, write_s);
  });
}

}  // namespace sparsetune::cli
