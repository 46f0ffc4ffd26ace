// `sparsetune info`: version, build options and the GPUs found.
#include "cli.hpp"
#include "core/version.hpp"
#include "runtime/device.hpp"

namespace sparsetune::cli {

void add_info_command(CLI::App& app, const GlobalOptions& g) {
  auto* cmd = app.add_subcommand("info", "Version, build options and the CUDA devices found");
  cmd->callback([&g] {
    const auto devices = runtime::list_devices();
    nlohmann::json j;
    j["version"] = kVersion;
    j["build_type"] = kBuildType;
    j["compiler"] = kCompiler;
    j["cuda_runtime"] = runtime::cuda_runtime_version();
    j["devices"] = nlohmann::json::array();
    for (const auto& d : devices)
      j["devices"].push_back({{"ordinal", d.ordinal},
                              {"name", d.name},
                              {"arch", d.arch()},
                              {"sms", d.sm_count},
                              {"memory_bytes", d.global_mem_bytes},
                              {"l2_bytes", d.l2_bytes},
                              {"smem_per_block_optin", d.smem_per_block_optin},
                              {"smem_per_sm", d.smem_per_sm}});
    if (devices.empty()) j["device_status"] = runtime::device_status();
    if (g.json) return print_json(j);
    std::vector<std::vector<std::string>> rows = {
        {"version", kVersion},
        {"build", std::string(kBuildType) + ", " + kCompiler},
        {"cuda runtime", runtime::cuda_runtime_version() + " (static)"}};
    if (devices.empty()) rows.push_back({"gpu", runtime::device_status()});
    for (const auto& d : devices)
      rows.push_back({"gpu " + std::to_string(d.ordinal),
                      d.name + ", " + d.arch() + ", " + std::to_string(d.sm_count) + " SMs, " +
                          std::to_string(d.global_mem_bytes >> 20) + " MiB, L2 " +
                          std::to_string(d.l2_bytes >> 10) + " KiB"});
    print_table(rows);
  });
}

}  // namespace sparsetune::cli
