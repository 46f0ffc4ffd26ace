// `sparsetune emit-kernel --graph G.json FILE -o DIR`: the format binary, the kernel source, its
// host header and the graph, for one matrix and one operator graph. Needs no GPU.
#include <memory>

#include "cli.hpp"
#include "codegen/emit.hpp"
#include "core/error.hpp"
#include "core/operand_checks.hpp"
#include "graph/format.hpp"
#include "io/matrix_file.hpp"

namespace sparsetune::cli {

void add_emit_command(CLI::App& app, const GlobalOptions& g) {
  auto* cmd = app.add_subcommand(
      "emit-kernel", "Design the format of an operator graph for a matrix and generate its kernel");
  struct Options {
    std::string graph, in, out, dtype = "f64", layout = "row";
    int index_bits = 0;
    bool no_optimize = false, reference = false, split_words = false;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("--graph", o->graph, "Operator graph (JSON), e.g. configs/graphs/csr-vector.json")
      ->required();
  cmd->add_option("FILE", o->in, "Matrix: .mtx, .mtx.gz or .safetensors")->required();
  cmd->add_option("-o,--out", o->out, "Output folder (created if missing)")->required();
  cmd->add_option("--dtype", o->dtype, "Value type: f64, f32, or f16 (fp32 accumulation)")
      ->check(CLI::IsMember({"f64", "f32", "f16"}))
      ->capture_default_str();
  cmd->add_option(
         "--index-bits", o->index_bits,
         "Index width: of the arrays before narrowing and of the kernels' arithmetic (0: 32 "
         "where every index fits)")
      ->check(CLI::IsMember({0, 32, 64}))
      ->capture_default_str();
  cmd->add_option("--layout", o->layout,
                  "SpMM graphs: the layout of B and C the kernels take, row or col "
                  "(column-major)")
      ->check(CLI::IsMember({"row", "col"}))
      ->capture_default_str();
  cmd->add_flag("--no-optimize", o->no_optimize, "Keep every array stored, full width");
  cmd->add_flag("--split-words", o->split_words,
                "Store 32-bit column words that fit 24 bits as 16 + 8 bits (nz_col_hi)");
  cmd->add_flag(
      "--reference", o->reference,
      "Also write x.f64 and y_reference.f64 (fp64 A x) to check the kernel where it runs");
  cmd->callback([o, &g] {
    io::StagedFolder::check_target(o->out);
    const graph::Graph gr = graph::read_graph(o->graph);
    const Csr64 a = io::read_matrix(o->in);
    check_values_fit(a.val, o->dtype, o->in);
    check_dense_operands(static_cast<double>(a.rows), static_cast<double>(a.cols), 1.0, o->dtype,
                         o->in);
    codegen::EmitOptions opt;
    opt.design.dtype = o->dtype;
    opt.design.index_bits = o->index_bits;
    opt.layout = o->layout;
    opt.optimizer.split_words = o->split_words;
    if (o->no_optimize) opt.optimizer = codegen::OptimizerOptions::none();
    // A rule that fails while the format is designed names the graph and matrix it met.
    const auto e = [&] {
      try {
        return codegen::generate(gr, a, opt);
      } catch (const Error& err) {
        throw Error(o->graph + " on " + o->in + ": " + err.what());
      }
    }();
    io::StagedFolder out(o->out, io::StagedFolder::Outputs::one_run);  // all files or none
    codegen::stage_emitted(e, gr, out);
    if (o->reference) codegen::stage_reference(a, out);
    out.commit();
    const auto& files = out.files();
    nlohmann::json parts = nlohmann::json::array();
    for (const auto& p : e.format.parts)
      parts.push_back({{"kernel", p.kernel},
                       {"grid", p.grid},
                       {"block", p.threads},
                       {"stored_entries", p.nnz_stored},
                       {"padding", p.pad_entries}});
    if (g.json)
      return print_json({{"graph", gr.name},
                         {"rows", a.rows},
                         {"cols", a.cols},
                         {"nnz", a.nnz()},
                         {"parts", parts},
                         {"format_bytes", graph::stored_bytes(e.format)},
                         {"arrays_modeled", e.report.modeled},
                         {"arrays_narrowed", e.report.narrowed},
                         {"arrays_packed", e.report.packed},
                         {"arrays_split", e.report.split},
                         {"kernel_index_bits", e.kernels.index_bits},
                         {"files", files}});
    std::vector<std::vector<std::string>> rows = {
        {"graph", gr.name.empty() ? o->graph : gr.name},
        {"matrix", std::to_string(a.rows) + " x " + std::to_string(a.cols) + ", " +
                       std::to_string(a.nnz()) + " non-zeros"},
        {"format", std::to_string(graph::stored_bytes(e.format)) + " bytes of arrays (" +
                       std::to_string(e.report.bytes_before) + " before the optimizer), " +
                       std::to_string(e.report.modeled) + " arrays computed, " +
                       std::to_string(e.report.narrowed) + " narrowed, " +
                       std::to_string(e.report.packed) + " packed, " +
                       std::to_string(e.report.split) + " split"},
        {"kernel indices", e.kernels.index_bits == 32 ? "32-bit (every index fits)" : "64-bit"}};
    for (const auto& p : e.format.parts)
      rows.push_back({p.kernel, "<<<" + std::to_string(p.grid) + ", " + std::to_string(p.threads) +
                                    ">>>, " + std::to_string(p.nnz_stored) + " stored entries"});
    if (e.kernels.kernels.size() == 1 && e.kernels.kernels[0] == codegen::kFusedKernel)
      rows.push_back({"launch", "one: " + std::string(codegen::kFusedKernel) +
                                    " runs every part on its own blocks (fused)"});
    for (const auto& f : files) rows.push_back({"wrote", f});
    print_table(rows);
  });
}

}  // namespace sparsetune::cli
