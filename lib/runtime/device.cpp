#include "runtime/device.hpp"

#include <cuda_runtime.h>

namespace sparsetune::runtime {

namespace {
// Probes once: the first CUDA call initialises the runtime, and its failure is sticky.
cudaError_t probe(int* count) {
  static int cached_count = 0;
  static cudaError_t cached = cudaGetDeviceCount(&cached_count);
  *count = cached_count;
  return cached;
}
}  // namespace

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> out;
  int count = 0;
  if (probe(&count) != cudaSuccess) return out;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
    DeviceInfo info;
    info.ordinal = d;
    info.name = p.name;
    info.cc_major = p.major;
    info.cc_minor = p.minor;
    info.sm_count = p.multiProcessorCount;
    info.global_mem_bytes = static_cast<std::int64_t>(p.totalGlobalMem);
    info.l2_bytes = p.l2CacheSize;
    info.smem_per_block_optin = static_cast<std::int64_t>(p.sharedMemPerBlockOptin);
    info.smem_per_sm = static_cast<std::int64_t>(p.sharedMemPerMultiprocessor);
    out.push_back(info);
  }
  return out;
}

std::string device_status() {
  int count = 0;
  cudaError_t err = probe(&count);
  if (err == cudaSuccess && count > 0) return "";
  if (err == cudaSuccess || err == cudaErrorNoDevice) return "no CUDA device";
  return std::string("no CUDA device (") + cudaGetErrorString(err) + ")";
}

std::string cuda_runtime_version() {
  return std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10);
}

}  // namespace sparsetune::runtime
