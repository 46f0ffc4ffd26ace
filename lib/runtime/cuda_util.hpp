#pragma once
// Internal to lib/runtime: checked CUDA calls and owning device buffers. Every CUDA call goes
// through cuda_check, and every launch is followed by check_launch.
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "core/error.hpp"

namespace sparsetune::runtime {

// A CUDA failure. The worker treats it as fatal: the context may be unusable afterwards.
class CudaError : public Error {
 public:
  using Error::Error;
};

inline void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw CudaError(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                    ")");
}

// After a launch: the launch's own error, then (synchronously) any fault while it ran.
inline void check_launch(const char* what, cudaStream_t stream, bool sync) {
  cuda_check(cudaGetLastError(), what);
  if (sync) cuda_check(cudaStreamSynchronize(stream), what);
}

#define SPARSETUNE_CUDA(call) ::sparsetune::runtime::cuda_check((call), #call)

// Owning device allocation of `bytes` bytes.
class DeviceMem {
 public:
  DeviceMem() = default;
  explicit DeviceMem(std::size_t bytes) : bytes_(bytes) {
    if (bytes_) SPARSETUNE_CUDA(cudaMalloc(&p_, bytes_));
  }
  ~DeviceMem() {
    if (p_) cudaFree(p_);
  }
  DeviceMem(DeviceMem&& o) noexcept : p_(o.p_), bytes_(o.bytes_) {
    o.p_ = nullptr;
    o.bytes_ = 0;
  }
  DeviceMem& operator=(DeviceMem&& o) noexcept {
    if (this != &o) {
      if (p_) cudaFree(p_);
      p_ = o.p_;
      bytes_ = o.bytes_;
      o.p_ = nullptr;
      o.bytes_ = 0;
    }
    return *this;
  }
  DeviceMem(const DeviceMem&) = delete;
  DeviceMem& operator=(const DeviceMem&) = delete;

  void* get() const { return p_; }
  std::size_t bytes() const { return bytes_; }
  void upload(const void* src, std::size_t n) {
    if (n > bytes_) throw Error("upload past the end of a device buffer");
    if (n) SPARSETUNE_CUDA(cudaMemcpy(p_, src, n, cudaMemcpyHostToDevice));
  }
  void download(void* dst, std::size_t n) const {
    if (n > bytes_) throw Error("download past the end of a device buffer");
    if (n) SPARSETUNE_CUDA(cudaMemcpy(dst, p_, n, cudaMemcpyDeviceToHost));
  }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// Owning page-locked host allocation: what cudaMemcpyAsync needs to overlap with kernels and
// to copy at full PCIe/NVLink speed. Zero bytes allocate nothing (get() is null).
class PinnedMem {
 public:
  explicit PinnedMem(std::size_t bytes) : bytes_(bytes) {
    if (bytes_) SPARSETUNE_CUDA(cudaHostAlloc(&p_, bytes_, cudaHostAllocDefault));
  }
  ~PinnedMem() {
    if (p_) cudaFreeHost(p_);
  }
  PinnedMem(PinnedMem&& o) noexcept : p_(o.p_), bytes_(o.bytes_) {
    o.p_ = nullptr;
    o.bytes_ = 0;
  }
  PinnedMem(const PinnedMem&) = delete;
  PinnedMem& operator=(const PinnedMem&) = delete;
  PinnedMem& operator=(PinnedMem&&) = delete;
  char* get() const { return static_cast<char*>(p_); }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace sparsetune::runtime
