#pragma once
// What the program knows of the CUDA devices present. Callable on a machine with no GPU or
// driver: it then reports none and says why.
#include <cstdint>
#include <string>
#include <vector>

namespace sparsetune::runtime {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::int64_t global_mem_bytes = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t smem_per_block_optin = 0;
  std::int64_t smem_per_sm = 0;
  std::string arch() const { return "sm_" + std::to_string(cc_major * 10 + cc_minor); }
};

// Every CUDA device visible to this process; empty when there is none (or no driver).
std::vector<DeviceInfo> list_devices();

// Why list_devices() is empty ("no CUDA device", the driver's error string), or "" if not.
std::string device_status();

// Version of the CUDA runtime this program was built against, e.g. "13.0".
std::string cuda_runtime_version();

}  // namespace sparsetune::runtime
