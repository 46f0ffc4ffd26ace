// `sparsetune convert IN OUT`: a matrix between .mtx, .mtx.gz and the .safetensors container, or a
// tensor between .tns, .tns.gz and its .safetensors container.
#include <chrono>
#include <memory>

#include "cli.hpp"
#include "core/error.hpp"
#include "io/file_bytes.hpp"
#include "io/matrix_file.hpp"
#include "io/matrix_market.hpp"
#include "io/tensor_file.hpp"

namespace sparsetune::cli {

namespace {
double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

void convert_tensor(const std::string& in, const std::string& out, const std::string& layout,
                    const GlobalOptions& g) {
  if (layout != "csr") throw Error("convert: --layout applies to matrices; " + in + " is a tensor");
  io::check_tensor_output_name(out);
  const auto t0 = std::chrono::steady_clock::now();
  io::TnsInfo info;
  const SparseTensor t = io::read_tensor(in, &info);
  const auto t1 = std::chrono::steady_clock::now();
  io::write_tensor(out, t);
  const double read_s = seconds(t1 - t0), write_s = seconds(std::chrono::steady_clock::now() - t1);
  if (g.json)
    return print_json({{"input", in},
                       {"output", out},
                       {"dims", t.dims},
                       {"nnz", t.nnz()},
                       {"stored_entries", info.stored_entries},
                       {"duplicates", info.duplicates},
                       {"read_seconds", read_s},
                       {"write_seconds", write_s},
                       {"seconds", read_s + write_s}});
  std::string dims;
  for (auto d : t.dims) dims += (dims.empty() ? "" : " x ") + std::to_string(d);
  std::printf(
      "%s -> %s: tensor %s, %lld entries, %lld duplicates summed, read %.3f s, write %.3f s\n",
      in.c_str(), out.c_str(), dims.c_str(), static_cast<long long>(t.nnz()),
      static_cast<long long>(info.duplicates), read_s, write_s);
}
}  // namespace

void add_convert_command(CLI::App& app, const GlobalOptions& g) {
  auto* cmd = app.add_subcommand(
      "convert",
      "Convert a matrix between .mtx, .mtx.gz and the binary .safetensors container, or a tensor "
      "between .tns, .tns.gz and its .safetensors container");
  // Options outlive this function: CLI11 writes into them while parsing.
  struct Options {
    std::string in, out, layout = "csr";
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("IN", o->in,
                  "Input matrix (.mtx, .mtx.gz, .safetensors) or tensor (.tns, .tns.gz, "
                  ".safetensors), detected by content")
      ->required();
  // OUT as a second positional, or as -o like every other command that writes a file.
  auto* out_pos = cmd->add_option("OUT", o->out,
                                  "Output file; its extension (.mtx, .mtx.gz, .tns, .tns.gz, "
                                  ".safetensors) picks the format");
  auto* out_opt = cmd->add_option("-o,--output", o->out, "Output file (instead of OUT)");
  out_pos->excludes(out_opt);
  out_opt->excludes(out_pos);
  cmd->add_option("--layout", o->layout, "Layout inside a .safetensors output")
      ->check(CLI::IsMember({"csr", "coo"}))
      ->capture_default_str();
  cmd->callback([o, &g] {
    if (o->out.empty()) throw Error("convert: no output file (give OUT or -o FILE)");
    using clock = std::chrono::steady_clock;
    if (io::is_tensor_file(o->in)) return convert_tensor(o->in, o->out, o->layout, g);
    io::check_matrix_output_name(o->out);
    if (o->layout != "csr" && !io::ends_with_nocase(o->out, ".safetensors"))
      throw Error("convert: --layout " + o->layout + " is the layout inside a .safetensors " +
                  "output; " + o->out + " is Matrix Market");
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
